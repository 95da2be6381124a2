package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnergyFiguresInEveryFormat gives one level of the reference sweep
// the energy and cost figures a run writes (energy_j and the figures
// derived from it) and checks that each report format shows them.
func TestEnergyFiguresInEveryFormat(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	level := doc["runs"].([]any)[0].(map[string]any)["levels"].([]any)[0].(map[string]any)
	for k, v := range map[string]any{"energy_j": 4321.0, "mean_power_w": 612.5, "peak_power_w": 689.25,
		"joules_per_output_token": 0.8765, "tok_s_per_watt": 1.2345, "cost_usd_per_mtok": 0.5432, "energy_method": "NVML energy counter, read every 1s"} {
		level[k] = v
	}
	path := filepath.Join(t.TempDir(), "energy.json")
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range reportFormats {
		// --wide: the energy figures are not the compact table's.
		stdout, stderr, err := cliRun(context.Background(), "report", "--format", format, "--wide", path)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, stderr)
		}
		for _, want := range []string{"4321", "612.5", "689.2", "0.87", "1.23", "0.543"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("report --format %s lacks %s", format, want)
			}
		}
	}
}

// TestSimEnergyNotSimulated: a simulated run reports no energy, says so,
// and a per-hour price still gives each level its cost.
func TestSimEnergyNotSimulated(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sim.json")
	if _, stderr, err := cliRun(context.Background(), simArgs("--concurrency", "1,4", "--requests", "8", "--price-per-hour", "2.5", "--out", out)...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	run := readDoc(t, out).Runs[0]
	if !strings.Contains(strings.Join(run.Warnings, "|"), "energy: not simulated") || run.PricePerHour != 2.5 {
		t.Errorf("warnings %q, price %v", run.Warnings, run.PricePerHour)
	}
	for _, l := range run.Levels {
		if l.EnergyJ != nil || l.JoulesPerOutputToken != nil || l.CostUSDPerMTok == nil || *l.CostUSDPerMTok <= 0 {
			t.Errorf("level c=%d: energy %v, cost %v; want null energy and a cost", l.Concurrency, l.EnergyJ, l.CostUSDPerMTok)
		}
	}
}

func TestCostFlagErrors(t *testing.T) {
	base := []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:9", "--model", "m"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--price-per-hour", "0"}, "--price-per-hour 0: want a positive price"},
		{[]string{"--price-per-kwh", "-1"}, "--price-per-kwh -1"},
		{[]string{"--price-per-hour", "2", "--price-per-kwh", "0.3"}, "are alternatives"},
	} {
		_, _, err := cliRun(context.Background(), append(append([]string{}, base...), tc.args...)...)
		if err == nil || ExitCode(err, new(strings.Builder)) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v; want exit 2 with %q", tc.args, err, tc.want)
		}
	}
}
