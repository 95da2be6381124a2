// Command accuracy runs every case of the public calibration corpus
// (testdata/calibration/cases.jsonl) through the simulator with its
// published setup and no fit, and writes the accuracy page
// (docs/accuracy.md): median |error| and bias of throughput, TPOT and TTFT
// overall, per GPU class, load regime, server family and source, each
// case's figures, and the cases it could not run with the reason.
//
// Run it from the repository root:
//
//	go run ./sim/accuracy            # rewrites docs/accuracy.md
//	go run ./sim/accuracy -out -     # prints the page
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: exit 0, 1 on a failure, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cases := fs.String("cases", "testdata/calibration/cases.jsonl", "corpus file (JSON Lines)")
	out := fs.String("out", "docs/accuracy.md", "page to write (- for standard output)")
	cv := fs.String("cv", cvFile, "cross-validated figures to write for sim.AccuracyClaim (- for none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "accuracy: unexpected argument %q (flags: -cases, -out, -cv)\n", fs.Arg(0))
		return 2
	}
	page, figures, err := Generate(*cases)
	if err != nil {
		fmt.Fprintf(stderr, "accuracy: %v\n", err)
		return 1
	}
	if *out == "-" {
		_, err = io.WriteString(stdout, page)
	} else {
		err = os.WriteFile(*out, []byte(page), 0o644)
	}
	if err == nil && *cv != "-" {
		err = os.WriteFile(*cv, []byte(figures), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "accuracy: %v\n", err)
		return 1
	}
	return 0
}

// Generate reads the corpus at path and renders its accuracy page and
// the cross-validated figures (cvFile's JSON).
func Generate(path string) (page, figures string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	outs := Run(cases)
	sim, _ := split(outs)
	return Page(path, outs), CVJSON(sim), nil
}
