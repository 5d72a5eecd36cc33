-- reply.lua: a script's reply and its refusals.

-- reply encodes a script's result, after delivering pending notes, with the
-- queues to wake and the effects to apply. raw, when given, is a JSON text
-- spliced in as the field raw_name without re-encoding (a job's input).
local function reply(t, raw_name, raw)
  drain_notes()
  t.woken, t.effects = A.woken, A.effects
  local s = cjson.encode(t)
  if raw_name and raw then
    if s == '{}' then return '{"' .. raw_name .. '":' .. raw .. '}' end
    return string.sub(s, 1, -2) .. ',"' .. raw_name .. '":' .. raw .. '}'
  end
  return s
end

-- fail replies with an error code (and details); nothing was written.
local function fail(code, extra)
  local t = extra or {}
  t.err = code
  return cjson.encode(t)
end
