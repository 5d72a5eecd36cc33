-- base.lua: numbers, JSON and lex-member encodings every other helper uses.
--
-- The files of scripts/lib hold the helpers the scripts share, one concern
-- per file. scripts.go builds each script as: a generated prelude, the
-- top-level definitions of these files the script uses (directly or through
-- other definitions, in the order libFiles lists the files), then the
-- script. A definition may only use those above it, in its own file or in
-- an earlier one (TestScriptsDefineWhatTheyUse checks it). Each file's
-- opening comment, up to the first blank line, is left out of the scripts.
-- The prelude defines
--   K -> the script's keys by name (K.j, K.idx, ...): scripts.go finds every
--        K.<name> the code mentions, passes those keys in KEYS (all of one
--        partition, so of one hash tag) and binds them here. A script never
--        builds a key name, so it runs on Redis Cluster and ElastiCache
--        Serverless, which refuse undeclared keys.
--   KW -> the keys after K, a list the caller chose (only in scripts that
--        mention KW: the upgrade's version-1 keys).
--   A -> the call's one argument, decoded from JSON (ARGV[1]). Every call
--        carries A.now (microseconds since the epoch, a decimal string),
--        A.ms (milliseconds, a number), A.p (this partition) and A.P (the
--        partition count).
-- Scripts reply with one JSON object (see reply.lua). Numbers that may
-- exceed 2^46 (ids, microsecond times, u64 settings) travel as decimal
-- strings: cjson formats numbers with 14 significant digits.

local function num(v) return tonumber(v) or 0 end

-- int_str formats an integer-valued number exactly; values beyond 2^53 (or
-- NaN) become '+inf', which ZADD understands as "never".
local function int_str(x)
  if x ~= x or x >= 9007199254740992 then return '+inf' end
  if x <= -9007199254740992 then return '-inf' end
  return string.format('%d', x)
end

-- ms turns a stored microsecond timestamp into whole milliseconds.
local function ms(us) return math.floor(num(us) / 1000) end

-- lp is a non-negative integer (or its decimal string) with its digit count
-- in front as a letter, so that byte order is numeric order: 9 -> 'a9',
-- 10 -> 'b10'.
local function lp(n)
  if type(n) == 'number' then n = int_str(n) end
  return string.char(96 + #n) .. n
end

-- esc makes user text safe in a lex member "<text> <rest>": no space is left
-- in it, and different texts stay different and never prefix one another's
-- "<text> " (queue names need none: they have no space or '!').
local ESC = {[' '] = '!a', ['!'] = '!b'}
local function esc(s) return (string.gsub(s, '[ !]', ESC)) end

-- lex_range is the ZRANGEBYLEX bounds of every member starting "<prefix> ".
local function lex_range(prefix) return '[' .. prefix .. ' ', '(' .. prefix .. '!' end

-- id_of_member is the job id at the end of an idx (or other lex) member.
local function id_of_member(m) return string.match(m, '(%d+)$') end

-- decode parses JSON without raising; nil when it is not valid or not a
-- table.
local function decode(s)
  if type(s) ~= 'string' then return nil end
  local ok, v = pcall(cjson.decode, s)
  if ok and type(v) == 'table' then return v end
  return nil
end

-- partition_of is the partition holding job id.
local function partition_of(id) return num(id) % A.P end
