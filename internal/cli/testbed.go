package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/servebench/servebench/tinymodel"
)

func runTestbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, "Usage: servebench testbed model --out FILE.gguf [flags]\n\nSubcommands:\n  model  write a tiny random-weight llama GGUF model for tests")
		if len(args) == 0 {
			return usagef("testbed: missing subcommand (want: model)")
		}
		return nil
	}
	if args[0] != "model" {
		return usagef("testbed: unknown subcommand %q (want: model)", args[0])
	}
	return runTestbedModel(args[1:], stdout)
}

func runTestbedModel(args []string, stdout io.Writer) error {
	def := tinymodel.DefaultSpec()
	fs := newFlagSet("testbed model", "testbed model --out FILE.gguf [--layers 2 --dim 64 --heads 4 --kv-heads 2 --ffn 128 --ctx 4096 --seed 1 --dtype f32]", stdout)
	out := fs.String("out", "", "path of the GGUF file to write (required)")
	layers := fs.Int("layers", def.Layers, "transformer blocks")
	dim := fs.Int("dim", def.Dim, "hidden size (a multiple of --heads)")
	heads := fs.Int("heads", def.Heads, "attention heads")
	kvHeads := fs.Int("kv-heads", def.KVHeads, "key/value heads (must divide --heads)")
	ffn := fs.Int("ffn", def.FFN, "feed-forward size")
	ctxLen := fs.Int("ctx", def.Ctx, "trained context length (at least 16)")
	seed := fs.Uint64("seed", def.Seed, "seed of the random weights")
	dtype := fs.String("dtype", string(def.Dtype), "storage of the weight matrices: f32 or f16")
	vocab := fs.Int("vocab", 0, "vocabulary size (0 = the built-in tokens; a real model's size makes the output head as large as its)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("testbed model: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return usagef("testbed model: --out is required")
	}
	spec := tinymodel.Spec{Layers: *layers, Dim: *dim, Heads: *heads, KVHeads: *kvHeads, FFN: *ffn, Ctx: *ctxLen, Seed: *seed, Dtype: tinymodel.Dtype(*dtype), Vocab: *vocab}
	if err := spec.Validate(); err != nil {
		return usagef("testbed model: %v", err)
	}
	if err := tinymodel.WriteFile(*out, spec); err != nil {
		return fmt.Errorf("testbed model: writing %s: %w", *out, err)
	}
	fmt.Fprintf(stdout, "wrote %s (llama, %d layers, dim %d, %d heads, %d kv heads, ctx %d)\n", *out, spec.Layers, spec.Dim, spec.Heads, spec.KVHeads, spec.Ctx)
	return nil
}
