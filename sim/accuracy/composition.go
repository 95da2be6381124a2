package main

import (
	"fmt"
	"sort"
	"strings"
)

// Composition counts what the corpus holds: every case, simulated or
// skipped, by the groupings its targets are stated in.
type Composition struct {
	Cases, Sources, Orgs int
	ByClass              map[Class]int
	ByRegime             map[Regime]int
	ByServer             map[string]int
	// TensorParallel counts the cases served with tensor parallelism over
	// 2 to 4 GPUs.
	TensorParallel int
	// LargestSource and LargestOrg are the most cases one source or one
	// organisation contributes, with its name.
	LargestSource, LargestOrg         int
	LargestSourceName, LargestOrgName string
}

// compose counts the cases of outs.
func compose(outs []Outcome) Composition {
	c := Composition{Cases: len(outs), ByClass: map[Class]int{}, ByRegime: map[Regime]int{}, ByServer: map[string]int{}}
	bySource, byOrg := map[string]int{}, map[string]int{}
	for _, o := range outs {
		c.ByClass[o.Class]++
		c.ByRegime[o.Case.Regime]++
		c.ByServer[o.Case.Server]++
		bySource[o.Case.Source]++
		byOrg[o.Case.Org]++
		if o.Case.TP >= 2 && o.Case.TP <= 4 {
			c.TensorParallel++
		}
	}
	c.Sources, c.Orgs = len(bySource), len(byOrg)
	c.LargestSourceName, c.LargestSource = largest(bySource)
	c.LargestOrgName, c.LargestOrg = largest(byOrg)
	return c
}

// largest is the key with the most counts (the first in name order on a tie).
func largest(m map[string]int) (string, int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, n := "", 0
	for _, k := range keys {
		if m[k] > n {
			best, n = k, m[k]
		}
	}
	return best, n
}

func share(n, of int) string {
	if of == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// writeComposition writes the corpus's composition: all cases, simulated
// or skipped, since a skipped case is still a published measurement.
func writeComposition(b *strings.Builder, outs []Outcome) {
	c := compose(outs)
	fmt.Fprintf(b, "## Corpus composition\n\nAll %d cases, simulated or skipped: %d sources (one page, thread or file each) from %d organisations; the largest source is %s with %d cases (%s), the largest organisation %s with %d (%s); %d cases use tensor parallelism over 2-4 GPUs.\n\n",
		c.Cases, c.Sources, c.Orgs, c.LargestSourceName, c.LargestSource, share(c.LargestSource, c.Cases),
		c.LargestOrgName, c.LargestOrg, share(c.LargestOrg, c.Cases), c.TensorParallel)
	fmt.Fprintf(b, "| GPU class | cases | | load regime | cases | | server | cases |\n|---|--:|---|---|--:|---|---|--:|\n")
	servers := make([]string, 0, len(c.ByServer))
	for s := range c.ByServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	rows := max(len(Classes), len(Regimes), len(servers))
	for i := 0; i < rows; i++ {
		var cl, rg, sv [2]string
		if i < len(Classes) {
			cl = [2]string{string(Classes[i]), fmt.Sprint(c.ByClass[Classes[i]])}
		}
		if i < len(Regimes) {
			rg = [2]string{string(Regimes[i]), fmt.Sprint(c.ByRegime[Regimes[i]])}
		}
		if i < len(servers) {
			sv = [2]string{servers[i], fmt.Sprint(c.ByServer[servers[i]])}
		}
		fmt.Fprintf(b, "| %s | %s | | %s | %s | | %s | %s |\n", cl[0], cl[1], rg[0], rg[1], sv[0], sv[1])
	}
	fmt.Fprintln(b)
}
