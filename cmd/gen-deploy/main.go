// Command gen-deploy writes what the deployment repeats from the route
// table and the sweep kinds (see internal/deploygen): `make generate` runs
// it from the repository root. With -check it changes nothing and exits 1
// when a file is out of date.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ocyless/ocyless/internal/deploygen"
)

func main() {
	check := flag.Bool("check", false, "report out-of-date files instead of writing them")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root, *check, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen-deploy:", err)
		os.Exit(1)
	}
}

// run generates for root, or only checks it, and reports each file to out.
func run(root string, check bool, out io.Writer) error {
	in, err := deploygen.RepoInput(root)
	if err != nil {
		return err
	}
	plan, err := deploygen.Generate(root, in)
	if err != nil {
		return err
	}
	if check {
		problems, err := plan.Check(root)
		if err != nil {
			return err
		}
		for _, p := range problems {
			fmt.Fprintln(out, p)
		}
		if len(problems) > 0 {
			return fmt.Errorf("%d file(s) out of date: run make generate", len(problems))
		}
		return nil
	}
	changed, err := plan.Write(root)
	for _, c := range changed {
		fmt.Fprintln(out, "wrote", c)
	}
	return err
}
