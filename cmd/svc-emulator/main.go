// Command svc-emulator runs the local reference server of the workflow execution service
// until SIGINT or SIGTERM. `svc-emulator -h` lists every flag and the seed file format.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// defaultListen is the provider's default endpoint (http://127.0.0.1:8188), so that a server
// started bare and a provider configured bare find each other.
const defaultListen = "127.0.0.1:8188"

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	if err := run(os.Args[1:], os.Stdout, stop); err != nil {
		fmt.Fprintln(os.Stderr, "svc-emulator:", err)
		os.Exit(2)
	}
}

// config is everything the command line sets.
type config struct {
	listen  string
	urlFile string
	opts    emulator.Options
	seed    seed
	faults  wholeServiceFaults
}

// wholeServiceFaults are the outage and the restart the command line arms, each counted from
// the first submission the server receives (a v2 job, a v1 prompt, a router request).
type wholeServiceFaults struct {
	outageAfter, outageFor   time.Duration
	outageRetryAfter         int
	restartAfter, restartFor time.Duration
}

// arm arms on srv the faults the flags ask for (a zero length: none).
func (f wholeServiceFaults) arm(srv *emulator.Server) {
	if f.outageFor > 0 {
		srv.OutageAfterSubmission(f.outageAfter, f.outageFor, f.outageRetryAfter)
	}
	if f.restartFor > 0 {
		srv.RestartAfterSubmission(f.restartAfter, f.restartFor)
	}
}

// run serves until stop receives a value or is closed. With -h it prints the usage to stdout
// and returns at once.
func run(args []string, stdout io.Writer, stop <-chan os.Signal) error {
	cfg, err := parseArgs(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w (svc-emulator -h lists the flags)", err)
	}

	srv := emulator.New(cfg.opts)
	defer srv.Close()
	cfg.seed.apply(srv)
	cfg.faults.arm(srv)
	if err := srv.StartOn(cfg.listen); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "svc-emulator listening on %s\n", srv.URL())
	if cfg.urlFile != "" {
		if err := atomicfile.WriteString(cfg.urlFile, srv.URL()); err != nil {
			return err
		}
	}
	<-stop
	return nil
}

// parseArgs reads the flags and the seed file they name. Flag errors are returned, not
// printed; -h writes the usage to usageOut and returns flag.ErrHelp.
func parseArgs(args []string, usageOut io.Writer) (*config, error) {
	cfg := &config{}
	fs := newFlagSet(cfg)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usageOut)
			fs.Usage()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return cfg, cfg.seed.loadFiles()
}

// newFlagSet defines every flag, writing into cfg.
func newFlagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("svc-emulator", flag.ContinueOnError)
	o := &cfg.opts
	fs.StringVar(&cfg.listen, "listen", defaultListen, "`address` to listen on; 127.0.0.1:0 picks a free port")
	fs.StringVar(&cfg.urlFile, "url-file", "", "write the endpoint URL to this `file` once listening (atomically)")
	fs.StringVar(&o.Token, "token", "", "API `token` to require: Authorization: Bearer on /api/v2 routes, X-API-Key (socket: token=) on v1 routes, either on router routes; empty: none needed")
	fs.StringVar(&o.MountPrefix, "prefix", "", "mount `path` every route is served under, e.g. /deployment/demo")
	fs.BoolVar(&o.AbsoluteLinks, "absolute-links", false, "return absolute links instead of host-relative ones")
	fs.BoolVar(&o.LogsLink, "logs", false, "capture job logs and offer urls.logs")
	fs.BoolFunc("strict", "serve as little generously as the contract allows: output hashes stay null, signed URLs expire after 3s, no event stream (501), progress stays at 0 while a job runs, Retry-After: 1 on reads of unfinished jobs", func(string) error {
		o.Mode = emulator.ModeStrict
		return nil
	})
	fs.DurationVar(&o.ReadMinInterval, "read-min-interval", 0, "answer a read of a job sooner than this `duration` after the last one with 429 rate_limited and Retry-After (0: never)")
	fs.IntVar(&o.Workers, "workers", 1, "`jobs` running at once")
	fs.DurationVar(&o.Latency, "latency", 0, "hold every request this `duration` before answering it, as a service far away")
	fs.DurationVar(&o.QueueDelay, "queue-delay", 0, "`duration` a submitted job stays queued before it may start")
	fs.DurationVar(&o.NodeDuration, "node-duration", 0, "`duration` of each node")
	fs.DurationVar(&o.StepDuration, "step-duration", 0, "`duration` of each sampler step (ImageNoiseSampler runs one per step)")
	fs.DurationVar(&o.Router.QueueDelay, "router-queue-delay", 0, "`duration` a queued router request stays IN_QUEUE")
	fs.DurationVar(&o.Router.RunDuration, "router-run-duration", 0, "`duration` of every router model run but demo/slow")
	fs.DurationVar(&cfg.faults.outageAfter, "outage-after", 0, "start the outage this `duration` after the first submission (a v2 job, a v1 prompt, a router request)")
	fs.DurationVar(&cfg.faults.outageFor, "outage-for", 0, "answer every request of every API 503 (upstream_error; the router's service_unavailable) with Retry-After for this `duration`, from -outage-after (0: no outage)")
	fs.IntVar(&cfg.faults.outageRetryAfter, "outage-retry-after", emulator.DefaultOutageRetryAfter, "`seconds` the outage's answers send in Retry-After")
	fs.DurationVar(&cfg.faults.restartAfter, "restart-after", 0, "restart this `duration` after the first submission")
	fs.DurationVar(&cfg.faults.restartFor, "restart-for", 0, "answer the submissions under way, then stop listening (connections refused) for this `duration` from -restart-after, then listen again on the same address with every job as it was; jobs run on meanwhile (0: no restart)")
	fs.Var(&cfg.seed.files, "seed", "read registry content from this JSON `file` (format below); repeatable")
	fs.Var(pairFlag(cfg.seed.addRegistryToken), "registry-token", "registry bearer token and the user it acts as, as `TOKEN=USER`; repeatable")
	fs.Var(pairFlag(cfg.seed.addPublisher), "publisher", "publisher and one of its members, as `PUBLISHER=USER`; repeatable")
	fs.Var(pairFlag(cfg.seed.addRepoToken), "repo-token", "code-hosting token and the repository owner it belongs to, as `TOKEN=OWNER`; repeatable")
	fs.Var(pairFlag(cfg.seed.addNode), "node", "unclaimed registry node and its repository owner, as `NODE=OWNER`; repeatable")
	fs.Usage = func() { printUsage(fs) }
	return fs
}

func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage: svc-emulator [flags]

Runs the local reference server of the workflow execution service (v2 jobs, v1 cloud
interface, model router, node registry) until SIGINT or SIGTERM. It prints
"svc-emulator listening on <URL>"; point the provider at it with SVC_ENDPOINT=<URL>
(the provider's default endpoint, http://127.0.0.1:8188, is the default -listen address).

Built-in node classes include RaiseError, which fails the job at run time with a
traceback (see examples/failing-node).

Flags:
`)
	fs.PrintDefaults()
	fmt.Fprint(w, seedFileHelp)
}
