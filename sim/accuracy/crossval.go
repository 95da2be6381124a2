package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/servebench/servebench/sim"
)

// fitFiles are the files holding every figure the simulator's default
// constants (sim/defaults.go) are fitted to, with the fitting tests'
// sources, and the measured tensor rates that scale them per board
// (hardware/gemm.go); relative to the repository root.
var fitFiles = []string{
	"sim/defaults.go",
	"sim/DEFAULTS.md",
	"sim/testdata/published-vllm-rtx5090-qwen3-4b.json",
	"sim/testdata/published-llamacpp-llama-bench.json",
	"hardware/gemm.go",
}

// pageRefs are the spellings under which the page at u may be cited in
// a fit's sources (lower case): the address without its scheme, and for
// a GitHub thread "owner/repo#N", for a GitHub file "owner/repo" with its
// path.
func pageRefs(u string) [][]string {
	p, err := url.Parse(strings.ToLower(u))
	if err != nil {
		return nil
	}
	refs := [][]string{{strings.TrimSuffix(p.Host+p.Path, "/")}}
	parts := strings.Split(strings.Trim(p.Path, "/"), "/")
	if p.Host != "github.com" || len(parts) < 4 {
		return refs
	}
	repo := parts[0] + "/" + parts[1]
	switch parts[2] {
	case "pull", "issues", "discussions":
		refs = append(refs, []string{repo + "#" + parts[3]}, []string{repo + "/" + parts[2] + "/" + parts[3]})
	case "blob", "tree":
		if len(parts) > 4 {
			refs = append(refs, []string{repo, strings.Join(parts[4:], "/")})
		}
	}
	return refs
}

// fitLeaks lists the corpus cases whose page the fit's sources (fitText,
// the text of fitFiles) cite: a constant fitted to such a page would make
// the no-fit figures of its source in-sample, not held out.
func fitLeaks(cases []Case, fitText string) []string {
	text := strings.ToLower(fitText)
	seen := map[string]bool{}
	var out []string
	for _, c := range cases {
		if seen[c.URL] {
			continue
		}
		seen[c.URL] = true
		for _, ref := range pageRefs(c.URL) {
			all := true
			for _, part := range ref {
				all = all && containsWord(text, part)
			}
			if all {
				out = append(out, fmt.Sprintf("%s (%s)", c.Source, strings.Join(ref, " ")))
				break
			}
		}
	}
	return out
}

// containsWord says s holds w with no letter or digit on either side, so
// "owner/repo#7676" is not found in "owner/repo#76760".
func containsWord(s, w string) bool {
	for i := 0; w != ""; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if (start == 0 || !alnum(s[start-1])) && (end == len(s) || !alnum(s[end])) {
			return true
		}
		i = start + 1
	}
	return false
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// writeCrossValidation writes the leave-one-source-out section: why the
// no-fit figures are the held-out ones, and the table by GPU class and
// load regime together, the pair a prediction's accuracy claim quotes.
func writeCrossValidation(b *strings.Builder, outs []Outcome) {
	fmt.Fprintf(b, "## Leave-one-source-out cross-validation\n\n")
	fmt.Fprintf(b, "Holding out one source means refitting the cost model's constants without it and predicting it. ")
	fmt.Fprintf(b, "No constant is fitted to this corpus: the defaults in `sim/defaults.go` come from the published figures in %s (the fixtures of their fitting tests); ", codeList(fitFiles[2:]))
	fmt.Fprintf(b, "and `TestDefaultsIndependentOfCorpus` fails if any of %s cites a corpus page. ", codeList(fitFiles))
	fmt.Fprintf(b, "Every refit without a held-out source therefore gives the same constants, and each source's no-fit prediction is its held-out prediction: the tables above are the cross-validated figures, and the one below splits them by GPU class and load regime together. ")
	fmt.Fprintf(b, "A class, regime or pair with fewer than %d cases, or one that misses the target on throughput, TPOT or TTFT, is outside the validated range.\n\n", minCases)
	fmt.Fprintf(b, "| GPU class / regime | cases | throughput | TPOT | TTFT | prefill (llama-bench pp) | status |\n|---|--:|---|---|---|---|---|\n")
	for _, c := range Classes {
		for _, r := range Regimes {
			in := func(o Outcome) bool { return o.Class == c && o.Case.Regime == r }
			writeRow(b, string(c)+" / "+string(r), outs, in)
		}
	}
	fmt.Fprintln(b)
}

func codeList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// cvFile is where the command writes the cross-validated figures that
// sim.AccuracyClaim embeds (relative to the repository root).
const cvFile = "sim/accuracy_cv.json"

// CVFigures are the cross-validated figures of every GPU class, every load
// regime and every pair of the two over the simulated outcomes: what a
// prediction's printed accuracy claim quotes.
func CVFigures(outs []Outcome) sim.CVFigures {
	f := sim.CVFigures{GeneratedBy: "go run ./sim/accuracy"}
	add := func(c Class, r Regime) {
		in := func(o Outcome) bool { return (c == "" || o.Class == c) && (r == "" || o.Case.Regime == r) }
		n, sums := groupSummary(outs, in)
		cv := func(m Metric) sim.CVMetric {
			s := sums[m]
			return sim.CVMetric{N: s.N, MedAbs: round4(s.MedAbs), Bias: round4(s.Bias)}
		}
		f.Groups = append(f.Groups, sim.CVGroup{Class: string(c), Regime: string(r), Cases: n,
			Throughput: cv(Throughput), TPOT: cv(TPOT), TTFT: cv(TTFT), Validated: groupStatus(n, sums) == "validated"})
	}
	add("", "")
	for _, c := range Classes {
		add(c, "")
	}
	for _, r := range Regimes {
		add("", r)
	}
	for _, c := range Classes {
		for _, r := range Regimes {
			add(c, r)
		}
	}
	return f
}

// CVJSON is CVFigures as the indented JSON of cvFile.
func CVJSON(outs []Outcome) string {
	b, err := json.MarshalIndent(CVFigures(outs), "", "  ")
	if err != nil {
		panic(err) // plain structs of numbers and strings always marshal
	}
	return string(b) + "\n"
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
