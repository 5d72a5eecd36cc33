package redisstore

import (
	"fmt"

	"github.com/ocyless/ocyless/shared/ocypod"

	"github.com/redis/go-redis/v9"

	"context"
	"slices"
	"strconv"
	"strings"
)

// escLex is base.lua's esc: user text made safe as the first part of a lex
// member "<text> <rest>".
func escLex(s string) string {
	if !strings.ContainsAny(s, " !") {
		return s
	}
	return strings.NewReplacer(" ", "!a", "!", "!b").Replace(s)
}

// lexRange is base.lua's lex_range: the ZRANGEBYLEX bounds of every member
// starting "<prefix> ".
func lexRange(prefix string) (string, string) { return "[" + prefix + " ", "(" + prefix + "!" }

// lp is base.lua's lp: a number with its digit count in front as a letter.
func lp(n uint64) string {
	s := strconv.FormatUint(n, 10)
	return string(rune(96+len(s))) + s
}

// idOfMember is the job id at the end of a lex member.
func idOfMember(m string) (uint64, bool) {
	i := len(m)
	for i > 0 && m[i-1] >= '0' && m[i-1] <= '9' {
		i--
	}
	id, err := strconv.ParseUint(m[i:], 10, 64)
	return id, err == nil
}

// lexIDs reads the ids of the lex index called name between lo and hi in
// every partition (one pipelined round) and returns them ascending, with
// the partitions' drop records (see withoutDropped) read in the same round.
func (s *Store) lexIDs(ctx context.Context, name, lo, hi string) ([]uint64, dropGens, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]interface{ Result() ([]string, error) }, s.l.P)
	drops := make([]*redis.MapStringStringCmd, s.l.P)
	for p := range s.l.P {
		cmds[p] = pipe.ZRangeByLex(ctx, s.l.key(p, name), &redis.ZRangeBy{Min: lo, Max: hi})
		drops[p] = pipe.HGetAll(ctx, s.l.key(p, keyDrops))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, translate(err)
	}
	out := []uint64{}
	for _, c := range cmds {
		ms, err := c.Result()
		if err != nil {
			return nil, nil, translate(err)
		}
		for _, m := range ms {
			id, ok := idOfMember(m)
			if !ok {
				return nil, nil, ocypod.Internal(fmt.Errorf("invalid member %q in %s", truncate(m), name))
			}
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, readDropGens(drops), nil
}
