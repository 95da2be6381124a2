// Command bench measures servebench's own client (package backend, the code
// `servebench run` uses) against a loopback streaming server written for
// the purpose, to show the harness is never the bottleneck. It starts the
// server as a child process (same binary, -role server), then runs each
// scenario -runs times and prints the median of each figure:
//
//   - requests/s with 1-token responses (closed loop, -workers streams);
//   - content chunks/s, server streaming as fast as it can;
//   - concurrent streams held (-hold), with client memory per stream;
//   - error of client-observed chunk gaps against the server's stamped
//     send gaps, at -gap-rate chunks/s in total (p50, p99, max).
//
// Usage: go run ./bench [-runs 5] [-scenarios rps,chunks,hold,gap] [-hold 2000]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"
)

type options struct {
	runs, workers, hold, chunkWorkers, burstChunks, flushEvery int
	gapStreams, gapRate, gapChunks                             int
	dur                                                        time.Duration
	only                                                       string
}

func main() {
	role := flag.String("role", "client", "client, or server (started by the client)")
	var o options
	flag.IntVar(&o.runs, "runs", 5, "runs of each scenario; medians are reported")
	flag.DurationVar(&o.dur, "duration", 3*time.Second, "length of the rate scenarios")
	flag.IntVar(&o.workers, "workers", 64, "concurrent streams for requests/s")
	flag.IntVar(&o.chunkWorkers, "chunk-workers", 32, "concurrent streams for chunks/s")
	flag.IntVar(&o.burstChunks, "burst-chunks", 1000, "chunks per response for chunks/s")
	flag.IntVar(&o.flushEvery, "flush-every", 1, "server flushes every this many chunks in the chunks/s scenario")
	flag.IntVar(&o.hold, "hold", 2000, "concurrent streams to hold")
	flag.IntVar(&o.gapStreams, "gap-streams", 50, "streams in the gap-error scenario")
	flag.IntVar(&o.gapRate, "gap-rate", 50000, "total chunks/s in the gap-error scenario")
	flag.IntVar(&o.gapChunks, "gap-chunks", 2000, "chunks per stream in the gap-error scenario")
	flag.StringVar(&o.only, "scenarios", "rps,chunks,hold,gap", "scenarios to run, comma-separated")
	cpuprofile := flag.String("cpuprofile", "", "write the client's CPU profile to this file")
	flag.Parse()
	if err := o.validate(*role); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if *cpuprofile != "" && *role == "client" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -cpuprofile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	if *role == "server" {
		err = runServer()
	} else {
		err = runClient(o)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// validate checks the flags before anything starts: a bad one is a usage
// error naming the flag (exit 2), not an empty table.
func (o options) validate(role string) error {
	if role != "client" && role != "server" {
		return fmt.Errorf("-role %q: want client or server", role)
	}
	if _, err := scenarios(o); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"-runs", o.runs}, {"-workers", o.workers}, {"-chunk-workers", o.chunkWorkers},
		{"-burst-chunks", o.burstChunks}, {"-flush-every", o.flushEvery}, {"-hold", o.hold},
		{"-gap-streams", o.gapStreams}, {"-gap-rate", o.gapRate}, {"-gap-chunks", o.gapChunks}} {
		if f.v < 1 {
			return fmt.Errorf("%s %d: must be at least 1", f.name, f.v)
		}
	}
	if o.dur <= 0 {
		return fmt.Errorf("-duration %v: must be positive", o.dur)
	}
	return nil
}

// startServer runs this binary as the server and returns its address.
func startServer(ctx context.Context) (string, func(), error) {
	cmd := exec.CommandContext(ctx, os.Args[0], "-role", "server")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("server did not start: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return "http://" + strings.TrimSpace(addr), stop, nil
}

func runClient(o options) error {
	ctx := context.Background()
	url, stop, err := startServer(ctx)
	if err != nil {
		return err
	}
	defer stop()
	loadBefore := loadAvg()
	fmt.Printf("servebench harness benchmark: GOMAXPROCS=%d, %d CPUs, %s, %d runs (medians)\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version(), o.runs)
	scs, err := scenarios(o)
	if err != nil {
		return err
	}
	figs := map[string][]float64{}
	for run := 0; run < o.runs; run++ {
		for _, sc := range scs {
			got, err := sc(ctx, url)
			if err != nil {
				return err
			}
			for k, v := range got {
				figs[k] = append(figs[k], v)
			}
		}
	}
	printFigures(figs)
	fmt.Printf("load average before: %s; after: %s\n", loadBefore, loadAvg())
	return nil
}

func printFigures(figs map[string][]float64) {
	keys := make([]string, 0, len(figs))
	for k := range figs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("| %-40s | %12s | %12s | %12s |\n", "figure", "median", "min", "max")
	fmt.Printf("|%s|%s|%s|%s|\n", strings.Repeat("-", 42), strings.Repeat("-", 14), strings.Repeat("-", 14), strings.Repeat("-", 14))
	for _, k := range keys {
		v := append([]float64(nil), figs[k]...)
		sort.Float64s(v)
		fmt.Printf("| %-40s | %12.1f | %12.1f | %12.1f |\n", k, median(v), v[0], v[len(v)-1])
	}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// loadAvg is the machine's 1/5/15-minute load average, to put the figures in
// context on a shared machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
