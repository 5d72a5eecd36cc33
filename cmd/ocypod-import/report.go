package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// reportStatuses are the columns of the jobs table: Ocypod's statuses.
var reportStatuses = []ocypod.Status{ocypod.StatusQueued, ocypod.StatusRunning, ocypod.StatusFailed,
	ocypod.StatusTimedOut, ocypod.StatusCompleted, ocypod.StatusCancelled}

// writeReport prints what the import did; complete is set when it
// finished (not interrupted).
func writeReport(w io.Writer, rep *redisstore.ImportReport, r config.Redis, complete bool) {
	fmt.Fprintf(w, "Source: %s\n", rep.Source)
	fmt.Fprintf(w, "Target: %s, namespace %q, %d partition(s)\n", r.RedactedURL(), rep.Namespace, rep.Partitions)
	if rep.NothingToDo {
		fmt.Fprintf(w, "Nothing to do: this source was imported into the target already (finished %s).\n", rep.Finished)
		return
	}
	if rep.DryRun {
		fmt.Fprintln(w, "Dry run: nothing was written. This is what an import would copy.")
	}
	if rep.Resumed {
		fmt.Fprintf(w, "Resumed: the source's jobs up to id %d were copied by an earlier run", rep.ResumedAfter)
		if rep.Present > 0 {
			fmt.Fprintf(w, "; %d more were found copied already and left as they are", rep.Present)
		}
		fmt.Fprintln(w, ".")
	}
	fmt.Fprintf(w, "Queues: %d, with their settings: %s\n", len(rep.Queues), strings.Join(rep.Queues, ", "))
	verb := "copied"
	if rep.DryRun {
		verb = "to copy"
	}
	fmt.Fprintf(w, "Jobs %s: %d\n", verb, rep.Copied)
	if rep.Copied > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "queue\t")
		for _, st := range reportStatuses {
			fmt.Fprintf(tw, "%s\t", st)
		}
		fmt.Fprintln(tw, "all\t")
		var sums [7]uint64
		for _, q := range slices.Sorted(maps.Keys(rep.Jobs)) {
			fmt.Fprintf(tw, "%s\t", q)
			var all uint64
			for i, st := range reportStatuses {
				n := rep.Jobs[q][st]
				all += n
				sums[i] += n
				fmt.Fprintf(tw, "%d\t", n)
			}
			sums[6] += all
			fmt.Fprintf(tw, "%d\t\n", all)
		}
		fmt.Fprint(tw, "all\t")
		for _, n := range sums {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
		_ = tw.Flush()
	}
	if rep.SkippedTotal > 0 {
		fmt.Fprintf(w, "Skipped: %d job(s) that cannot be read (not copied):\n", rep.SkippedTotal)
		for _, s := range rep.Skipped {
			fmt.Fprintf(w, "  job %d: %s\n", s.ID, s.Reason)
		}
		if n := rep.SkippedTotal - len(rep.Skipped); n > 0 {
			fmt.Fprintf(w, "  and %d more\n", n)
		}
	}
	if s := rep.Statistics; s != nil {
		fmt.Fprintf(w, "Statistics (/info): created %d, completed %d, retried %d, failed %d, timed_out %d, cancelled %d\n",
			s.Created, s.Completed, s.Retried, s.Failed, s.TimedOut, s.Cancelled)
	}
	fmt.Fprintf(w, "Ids: Ocypod's last job id is %d; new jobs get higher ids.\n", rep.LastID)
	switch {
	case complete && !rep.DryRun:
		fmt.Fprintln(w, "Done: the import is complete.")
	case !complete:
		fmt.Fprintln(w, "Stopped before the end: run the same command again to continue.")
	}
}
