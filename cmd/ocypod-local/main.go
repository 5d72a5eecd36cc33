// Command ocypod-local is the all-in-one local Ocypod server: every HTTP
// route on one address, the three maintenance sweeps on tickers, and Redis
// either from the configuration or, when none is configured, an embedded
// in-memory miniredis. It reads Ocypod's TOML configuration file and the
// OCYPOD_* environment variables.
//
//	ocypod-local [CONFIG_PATH]
//	ocypod-local -h | --help
//	ocypod-local -V | --version
//
// SIGINT or SIGTERM shut it down gracefully within server.shutdown_timeout
// (long-polls answer at once); a second one stops it at once.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/release"
)

const program = "ocypod-local"

func main() {
	// The first SIGINT or SIGTERM shuts down gracefully; a second one
	// stops at once, whatever is still running.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stop := context.WithCancel(context.Background())
	force := make(chan struct{})
	go func() {
		<-sigs
		stop()
		<-sigs
		close(force)
	}()
	// go-redis's own lines (dial failures) go through slog like ours.
	redisstore.RouteLogs(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	err := runWith(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr, hooks{force: force})
	signal.Stop(sigs)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run is the whole program: args are the command-line arguments without the
// program name, getenv the environment. It returns nil after a graceful
// shutdown (ctx cancelled) and after -h or -V, and an error whose text is
// meant for the user otherwise.
func run(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	return runWith(ctx, args, getenv, stdout, stderr, hooks{})
}

// hooks let tests observe a running server.
type hooks struct {
	// listening is called with the bound address (host:port) once the
	// server accepts connections; tests use port 0.
	listening func(addr string)
	// request is called with each request as it arrives, before it is
	// served: tests wait on it instead of sleeping until a request is in.
	request func(r *http.Request)
	// opened is called with the store and its Redis client once built.
	opened func(*redisstore.Store, redis.UniversalClient)
	// force, when closed during a shutdown, cuts it short: requests still
	// running are dropped (main closes it on a second signal).
	force <-chan struct{}
}

func runWith(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer, h hooks) error {
	path, action, err := parseArgs(args)
	switch {
	case err != nil:
		return err
	case action == "help":
		_, err := io.WriteString(stdout, usage())
		return err
	case action == "version":
		_, err := fmt.Fprintf(stdout, "%s %s (Ocypod API %s)\n", program, release.Version, httpapi.Version)
		return err
	}
	cfg, err := config.Load(path, getenv)
	if err != nil {
		return err
	}
	if action == "upgrade" {
		return upgradeOnly(ctx, cfg, getenv, stderr)
	}
	return serve(ctx, cfg, path, getenv, stderr, h)
}

// parseArgs reads [CONFIG_PATH], --upgrade, -h/--help and -V/--version.
// action is "help", "version", "upgrade" or "" (run the server).
func parseArgs(args []string) (path, action string, err error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help":
			return "", "help", nil
		case a == "--upgrade":
			action = "upgrade"
		case a == "-V" || a == "--version":
			return "", "version", nil
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			return "", "", fmt.Errorf("error: unexpected argument '%s'\n\nUsage: %s [CONFIG_PATH]\n\nFor more information, try '--help'", a, program)
		default:
			positional = append(positional, a)
		}
	}
	switch len(positional) {
	case 0:
		return "", action, nil
	case 1:
		if positional[0] == "" {
			return "", "", errors.New("error: the config path is empty")
		}
		return positional[0], action, nil
	}
	return "", "", fmt.Errorf("error: unexpected argument '%s'\n\nUsage: %s [CONFIG_PATH]\n\nFor more information, try '--help'", positional[1], program)
}

// usage is the --help text, including every OCYPOD_* variable.
func usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, `%s %s (Ocypod API %s)
Ocypod-compatible job queue server: every route, the sweeps, and Redis (an
embedded in-memory miniredis when no Redis URL is configured).

Usage: %s [CONFIG_PATH]

Arguments:
  [CONFIG_PATH]  Path to an Ocypod TOML configuration file

Options:
  --upgrade      Upgrade a namespace written by version 1 of the store, then exit
  -h, --help     Print help
  -V, --version  Print version

Environment (overrides the file; an empty value counts as unset):
`, program, release.Version, httpapi.Version, program)
	for _, v := range config.EnvVars() {
		fmt.Fprintf(&b, "  %-30s %s", v.Name, v.Description)
		if v.Default != "" {
			fmt.Fprintf(&b, " [default: %s]", v.Default)
		}
		b.WriteString("\n")
	}
	return b.String()
}
