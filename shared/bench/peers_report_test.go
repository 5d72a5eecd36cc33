package bench_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary positions of the peer lines.
const posPeers = 20

// Goals of the peer comparison, as ratios ours / BullMQ's (storage v3's).
const (
	peerCPUGoal   = 0.7 // redis-server CPU per lifecycle: at most
	peerBytesGoal = 0.6 // bytes per queued job: at most
	peerRateGoal  = 1.2 // lifecycles/s at 50 workers: at least
)

var completedUpdate = ocypod.JobUpdate{Status: &completed}

// peerSide is one side of the comparison: how to run a round of it.
type peerSide struct {
	fig *peerFigures
	run func(memOnly bool) ([]phaseResult, error)
}

// peerComparison runs sz.rounds rounds of the comparison on a redis-server
// of its own. Each round runs every side's lifecycles, then every side's
// enqueue-only memory phase, FLUSHALL before each, in an order that rotates
// from round to round so that no side always runs first on a shared machine.
// Without node (or npm) our side still runs and the peer lines say why they
// are not measured; a failing npm ci or peer script fails the run.
func peerComparison(r *run, sz peerSizes) {
	ctx := context.Background()
	srv := startExtraServer(r.tb)
	ours := &peerFigures{name: "ocyless store (redisstore)", jobs: sz.jobs, memJobs: sz.memJobs}
	sides := []peerSide{{ours, func(memOnly bool) ([]phaseResult, error) {
		return ourLifecycles(ctx, srv, sz, memOnly, redisstore.Options{})
	}}}
	dir, versions, err := peerInstall(ctx)
	notMeasured := ""
	switch {
	case err != nil && (err.Error() == "node not found" || err.Error() == "npm not found"):
		notMeasured = "not measured: " + err.Error()
		fmt.Fprintln(os.Stderr, "bench: PEERS NOT MEASURED:", err, "(install Node.js and npm to compare with BullMQ and bee-queue)")
		r.tb.Log("PEERS NOT MEASURED: " + err.Error())
	case err != nil:
		r.tb.Fatal(err)
	}
	var bull, bee *peerFigures
	if notMeasured == "" {
		bull = &peerFigures{name: "BullMQ " + versions["bullmq"] + " (ioredis " + versions["ioredis"] + ")", jobs: sz.jobs, memJobs: sz.memJobs}
		bee = &peerFigures{name: "bee-queue " + versions["bee-queue"] + " (redis " + versions["redis"] + ")", jobs: sz.jobs, memJobs: sz.memJobs}
		for _, p := range []struct {
			fig  *peerFigures
			name string
		}{{bull, "bullmq"}, {bee, "bee-queue"}} {
			sides = append(sides, peerSide{p.fig, func(memOnly bool) ([]phaseResult, error) {
				if memOnly {
					return nodePeer(ctx, dir, srv, p.name, "enqueue", sz.memJobs, sz.workers)
				}
				return nodePeer(ctx, dir, srv, p.name, "lifecycle", sz.jobs, sz.workers)
			}})
		}
	}
	r.resetTimer()
	for round := range sz.rounds {
		for _, memOnly := range []bool{false, true} {
			for i := range sides {
				s := sides[(i+round)%len(sides)]
				if err := srv.Client().FlushAll(ctx).Err(); err != nil {
					r.tb.Fatal(err)
				}
				phases, err := s.run(memOnly)
				if err != nil {
					r.tb.Fatalf("%s: %v", s.fig.name, err)
				}
				want := 2
				if memOnly {
					want = 1
				}
				if len(phases) != want {
					r.tb.Fatalf("%s: %d phases, want %d", s.fig.name, len(phases), want)
				}
				if memOnly {
					s.fig.mem = append(s.fig.mem, phases[0])
				} else {
					s.fig.life = append(s.fig.life, addPhases(phases...))
					s.fig.phases = append(s.fig.phases, phases)
					s.fig.lastCmds = s.fig.life[len(s.fig.life)-1].cmds
				}
				for _, p := range phases {
					s.fig.cpuChildrenObserved += p.cpuChildren
				}
			}
		}
	}
	r.stopTimer()
	r.metric(ours.cpuPerLife(), "redis-cpu-us/lifecycle")
	r.metric(ours.cmdsPerLife(), "commands/lifecycle")
	r.metric(ours.lifePerSec(), "lifecycles/s")
	r.metric(ours.bytesPerJob(), "bytes/queued-job")
	if bull != nil {
		r.metric(bull.cpuPerLife(), "bullmq-redis-cpu-us/lifecycle")
		r.metric(bull.lifePerSec(), "bullmq-lifecycles/s")
	}
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	reportPeers(sz, ours, bull, bee, notMeasured)
}

// reportPeers writes the summary lines and the detail tables.
func reportPeers(sz peerSizes, ours, bull, bee *peerFigures, notMeasured string) {
	shape := fmt.Sprintf("%d jobs, %d workers, median of %d rounds", sz.jobs, sz.workers, sz.rounds)
	type line struct {
		item, unit string
		rounds     func(*peerFigures) []float64
		goal       float64
		atMost     bool
		format     string
	}
	lines := []line{
		{"redis-server CPU per job lifecycle (create, take, complete; " + shape + ")", "µs", (*peerFigures).cpuRounds, peerCPUGoal, true, "%.1f"},
		{"Redis commands per job lifecycle (INFO commandstats, commands scripts run included; " + shape + ")", "", (*peerFigures).cmdsRounds, 0, false, "%.1f"},
		{"job lifecycles/s at " + fmt.Sprint(sz.workers) + " workers (" + shape + ")", "/s", (*peerFigures).rateRounds, peerRateGoal, false, "%.0f"},
		{fmt.Sprintf("bytes per queued job (used_memory delta after enqueuing %d jobs / %d; median of %d rounds)", sz.memJobs, sz.memJobs, sz.rounds), "B", (*peerFigures).bytesRounds, peerBytesGoal, true, "%.0f"},
	}
	for i, l := range lines {
		get := func(f *peerFigures) float64 { return medianF(l.rounds(f)) }
		val := func(f *peerFigures) string { return strings.TrimSpace(fmt.Sprintf(l.format+" %s", get(f), l.unit)) }
		g := goalLine{Item: "2. Peers: " + l.item, Measured: val(ours)}
		switch {
		case bull == nil:
			g.Floor, g.Verdict = "BullMQ "+notMeasured, "NOT MEASURED"
		default:
			ratio := get(ours) / get(bull)
			// Each round ran both sides: their ratio round by round.
			a, b := l.rounds(ours), l.rounds(bull)
			lo, hi := 0.0, 0.0
			for k := range min(len(a), len(b)) {
				x := a[k] / b[k]
				if k == 0 || x < lo {
					lo = x
				}
				hi = max(hi, x)
			}
			g.Floor = "BullMQ " + val(bull)
			g.Ratio = fmt.Sprintf("%.2f x BullMQ (rounds %.2f-%.2f; bee-queue %s: %.2f x)", ratio, lo, hi, val(bee), get(ours)/get(bee))
			g.Verdict = info
			if l.goal > 0 {
				g.Verdict = verdictOf((l.atMost && ratio <= l.goal) || (!l.atMost && ratio >= l.goal))
			}
		}
		switch {
		case l.goal == 0:
			g.Goal = "none (reference)"
		case l.atMost:
			g.Goal = fmt.Sprintf("<= %.1f x BullMQ", l.goal)
		default:
			g.Goal = fmt.Sprintf(">= %.1f x BullMQ", l.goal)
		}
		rep.goal(posPeers+i, g)
	}
	hdr := []string{"queue", "redis CPU per lifecycle (enqueue + process)", "commands per lifecycle (enqueue + process)", "scripts per lifecycle",
		"lifecycles/s", "bytes per queued job (of which client buffers)", "children CPU (forks)"}
	title := fmt.Sprintf("Peers: the same jobs (input %s) on one private redis-server, FLUSHALL before each side (%s; memory: %d jobs enqueued)", peerInput, shape, sz.memJobs)
	cmdTitle := "Peers: Redis commands per job lifecycle by name (INFO commandstats of the last round; calls from scripts included)"
	for _, f := range []*peerFigures{ours, bull, bee} {
		if f == nil {
			rep.row("peers", title, hdr, "peers-missing", "BullMQ, bee-queue", notMeasured, "-", "-", "-", "-", "-")
			continue
		}
		rep.row("peers", title, hdr, f.name, f.name,
			fmt.Sprintf("%.1f µs (%.1f + %.1f)", f.cpuPerLife(), f.phaseCPU(0), f.phaseCPU(1)),
			fmt.Sprintf("%.1f (%.1f + %.1f)", f.cmdsPerLife(), f.phaseCmds(0), f.phaseCmds(1)),
			fmt.Sprintf("%.2f", f.scriptsPerLife()),
			fmt.Sprintf("%.0f", f.lifePerSec()),
			fmt.Sprintf("%.0f (%.1f)", f.bytesPerJob(), f.clientBytesPerJob()),
			f.cpuChildrenObserved.Round(time.Millisecond).String())
		rep.row("peerCmds", cmdTitle, []string{"queue", "commands per lifecycle"}, f.name, f.name, topCommands(f.lastCmds, f.jobs, 14))
	}
}
