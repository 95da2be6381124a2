package cli

import (
	"context"
	"io"
	"strings"

	"github.com/servebench/servebench/backend"
)

// DefaultCapacitySLO is servebench capacity's budget: a first token
// within 1 s, the usability literature's limit for a user's flow of
// thought to stay uninterrupted (Nielsen, "Response Times: The 3
// Important Limits", 1993), and 100 ms per token after it, 10 tokens/s:
// about 7.5 words/s, twice the 238 words per minute (about 4 words/s) of
// adult silent reading (Brysbaert 2019), so the answer streams faster
// than its reader reads.
const DefaultCapacitySLO = "ttft_p95=1s,tpot_p95=100ms"

const capacitySynopsis = `capacity [run's server, workload and profile flags] [--user-profile chat|rag|code|agent] [--slo ttft_p95=1s,tpot_p95=100ms] [--out capacity.json]

How many people can this server serve? The shorthand of
servebench find --by users --slo ` + DefaultCapacitySLO + `: the largest
number of people of --user-profile (docs/users.md) for whom the server
holds the SLO. The default SLO: a first token within 1 s, the usability
literature's limit for an uninterrupted flow of thought (Nielsen,
"Response Times: The 3 Important Limits"), and at most 100 ms per token
after it, 10 tokens/s, about twice a fast silent reader (Brysbaert 2019,
"How many words do we read per minute?": 238 words/min). It prints one
sentence first ("RTX 4090, qwen2.5-14b AWQ, vLLM: 18 chat users (16–20) at
TTFT p95 ≤ 1 s, TPOT p95 ≤ 100 ms"; SIMULATED: first on --backend sim),
then find's answer line and, on a terminal, the table; it writes find's
document. Against a running server (--url), each --profile it launches
(one answer each) or the simulator (--backend sim --gpu --model).

Flags`

// runCapacity is servebench capacity: find's search by users, with the
// default SLO; one implementation (search).
func runCapacity(ctx context.Context, deps Deps, args []string, stdout, stderr io.Writer) error {
	cfg, fs, err := parseSearchFlags(args, stdout, true)
	if err != nil {
		return err
	}
	return search(ctx, deps, cfg, fs, stdout, stderr)
}

// serverWords names the server of an answer in words: GPU, model and
// quantization, and server family for a simulated one ("RTX 4090,
// qwen2.5-14b AWQ, vLLM"); the model and family of a real one.
func serverWords(cfg runConfig) string {
	if cfg.Sim != nil {
		in := cfg.Sim.Info
		model := in.Model
		if in.Quant != "" {
			model += " " + strings.ToUpper(in.Quant)
		}
		return strings.Join([]string{in.GPU, model, familyWords(in.Scheduler)}, ", ")
	}
	parts := []string{}
	if cfg.Model != "" {
		parts = append(parts, cfg.Model)
	}
	return strings.Join(append(parts, familyWords(string(cfg.Backend))), ", ")
}

// familyWords is a server family as its project spells it (its
// backend.Descriptor's Name); a generic family is its flag value.
func familyWords(f string) string {
	k := backend.Kind(f)
	if k.Describe().Generic {
		return f
	}
	return k.Name()
}
