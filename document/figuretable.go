package document

// builtinFigures is the table of level figures (figures.go), in the
// level table's column order. docs/metrics.md defines each.
func builtinFigures() []FigureSpec {
	const (
		seed   = InTable | InCSV | InGoBench | InCompare // the examples' figures
		listed = InCSV | InGoBench                       // latency statistics outside the level table
		shown  = InTable | InCSV | InGoBench
		// The compact table's figures: requests, errors, throughput,
		// TTFT p50 and p95, TPOT p50 and E2E p95 (with the load, eight
		// columns).
		compact = InCompact
	)
	out := []FigureSpec{
		{Key: "requests", Label: "requests", Prec: -1, Shows: InTable | InCSV | compact, Always: true,
			Value: func(l *Level) *float64 { return count(l.Requests) }},
		{Key: "errors", Label: "errors", Better: LowerIsBetter, Prec: -1, Shows: InTable | InCSV | compact, Always: true,
			Value: func(l *Level) *float64 { return count(l.Errors) }},
		{Key: FigThroughput, Label: "throughput", Unit: "tok/s", Better: HigherIsBetter, Prec: 1, Shows: seed | compact, Always: true, SLO: "throughput_min",
			Value:    func(l *Level) *float64 { return l.ThroughputTokS },
			Interval: func(l *Level) (**float64, **float64) { return &l.ThroughputTokSCILow, &l.ThroughputTokSCIHigh }},
		{Key: "per_request_tok_s", Label: "per-request", Unit: "tok/s", Better: HigherIsBetter, Prec: 1, Shows: InTable | InCSV, Always: true,
			Value: func(l *Level) *float64 {
				if l.ThroughputTokS == nil {
					return nil
				}
				v := *l.ThroughputTokS / float64(l.Concurrency)
				return &v
			}},
	}
	out = append(out, latency("ttft", "TTFT", 1, [5]Shows{listed, seed | compact, listed, seed | compact, shown}, [5]bool{false, true, false, true, false},
		[5]func(*Level) **float64{
			func(l *Level) **float64 { return &l.TTFTMeanMs }, func(l *Level) **float64 { return &l.TTFTP50Ms },
			func(l *Level) **float64 { return &l.TTFTP90Ms }, func(l *Level) **float64 { return &l.TTFTP95Ms },
			func(l *Level) **float64 { return &l.TTFTP99Ms }},
		[5]func(*Level) (**float64, **float64){nil,
			func(l *Level) (**float64, **float64) { return &l.TTFTP50MsCILow, &l.TTFTP50MsCIHigh }, nil,
			func(l *Level) (**float64, **float64) { return &l.TTFTP95MsCILow, &l.TTFTP95MsCIHigh },
			func(l *Level) (**float64, **float64) { return &l.TTFTP99MsCILow, &l.TTFTP99MsCIHigh }})...)
	out = append(out, latency("tpot", "TPOT", 2, [5]Shows{listed, seed | compact, listed, shown, listed}, [5]bool{false, true, false, false, false},
		[5]func(*Level) **float64{
			func(l *Level) **float64 { return &l.TPOTMeanMs }, func(l *Level) **float64 { return &l.TPOTP50Ms },
			func(l *Level) **float64 { return &l.TPOTP90Ms }, func(l *Level) **float64 { return &l.TPOTP95Ms },
			func(l *Level) **float64 { return &l.TPOTP99Ms }},
		[5]func(*Level) (**float64, **float64){nil,
			func(l *Level) (**float64, **float64) { return &l.TPOTP50MsCILow, &l.TPOTP50MsCIHigh }, nil,
			func(l *Level) (**float64, **float64) { return &l.TPOTP95MsCILow, &l.TPOTP95MsCIHigh },
			func(l *Level) (**float64, **float64) { return &l.TPOTP99MsCILow, &l.TPOTP99MsCIHigh }})...)
	itl := latency("itl", "ITL", 2, [5]Shows{listed, shown, listed, listed, shown}, [5]bool{},
		[5]func(*Level) **float64{
			func(l *Level) **float64 { return &l.ITLMeanMs }, func(l *Level) **float64 { return &l.ITLP50Ms },
			func(l *Level) **float64 { return &l.ITLP90Ms }, func(l *Level) **float64 { return &l.ITLP95Ms },
			func(l *Level) **float64 { return &l.ITLP99Ms }},
		[5]func(*Level) (**float64, **float64){})
	out = append(out, itl...)
	out = append(out, latency("e2e", "E2E", 1, [5]Shows{listed, shown, listed, shown | compact, listed}, [5]bool{},
		[5]func(*Level) **float64{
			func(l *Level) **float64 { return &l.E2EMeanMs }, func(l *Level) **float64 { return &l.E2EP50Ms },
			func(l *Level) **float64 { return &l.E2EP90Ms }, func(l *Level) **float64 { return &l.E2EP95Ms },
			func(l *Level) **float64 { return &l.E2EP99Ms }},
		[5]func(*Level) (**float64, **float64){nil,
			func(l *Level) (**float64, **float64) { return &l.E2EP50MsCILow, &l.E2EP50MsCIHigh }, nil,
			func(l *Level) (**float64, **float64) { return &l.E2EP95MsCILow, &l.E2EP95MsCIHigh },
			func(l *Level) (**float64, **float64) { return &l.E2EP99MsCILow, &l.E2EP99MsCIHigh }})...)
	out = append(out, telemetryFigures()...)
	out = append(out, scheduleFigures()...)
	out = append(out, cacheAndGoodputFigures()...)
	return append(out, energyFigures()...)
}

// latencyStats are the statistics of each latency, in the order the
// latency section, CSV and gobench show them.
var latencyStats = [5]string{"mean", "p50", "p90", "p95", "p99"}

// latency declares one latency's mean and percentiles: name is the JSON
// stem ("ttft"), label the table's ("TTFT"); shows, always, get and ci
// are per statistic, in latencyStats order. The percentiles with an
// interval can be SLO bounds ("ttft_p95"): a verdict needs the interval.
func latency(name, label string, prec int, shows [5]Shows, always [5]bool, get [5]func(*Level) **float64, ci [5]func(*Level) (**float64, **float64)) []FigureSpec {
	out := make([]FigureSpec, len(latencyStats))
	for i, st := range latencyStats {
		g := get[i]
		out[i] = FigureSpec{
			Key: Figure(name + "_" + st + "_ms"), Label: label + " " + st, Unit: "ms", Better: LowerIsBetter, Prec: prec,
			Value: func(l *Level) *float64 { return *g(l) }, Interval: ci[i],
			Latency: label, Stat: st, Shows: shows[i], Always: always[i],
		}
		if ci[i] != nil {
			out[i].SLO = name + "_" + st
		}
	}
	return out
}

// telemetryFigures are the server's and machine's figures and the
// level's counts.
func telemetryFigures() []FigureSpec {
	return []FigureSpec{
		{Key: "peak_vram_gib", Label: "peak VRAM", Unit: "GiB", Better: LowerIsBetter, Prec: 2, Shows: InTable | InCSV, Always: true,
			Value: func(l *Level) *float64 { return l.PeakVRAMGiB }},
		{Key: "peak_kv_cache_usage", Label: "peak KV cache", Unit: "%", Prec: 1, Shows: InTable | InCSV, Always: true,
			Value: func(l *Level) *float64 { return l.PeakKVCacheUsage }},
		{Key: "preemptions", Label: "preemptions", Better: LowerIsBetter, Prec: -1, Shows: InTable | InCSV, Always: true,
			Value: func(l *Level) *float64 { return l.Preemptions }},
		{Key: "mean_prompt_tokens", Label: "mean prompt", Unit: "tok", Prec: 1, Shows: InTable, Always: true,
			Value: func(l *Level) *float64 { return l.MeanPromptTokens }},
		{Key: "output_tokens", Label: "output", Unit: "tok", Prec: -1, Shows: InTable,
			Value: func(l *Level) *float64 { return countPtr(l.OutputTokens) }},
		{Key: "wall_seconds", Label: "wall", Unit: "s", Prec: 2, Shows: InTable,
			Value: func(l *Level) *float64 { return l.WallSeconds }},
	}
}

// scheduleFigures are the rate method's: its rates, how late it sent,
// the latencies from the scheduled send time, and the client's verdict.
func scheduleFigures() []FigureSpec {
	ms := func(key Figure, label string, get func(*Level) *float64) FigureSpec {
		return FigureSpec{Key: key, Label: label, Unit: "ms", Better: LowerIsBetter, Prec: 1, Shows: InTable, Value: get}
	}
	return []FigureSpec{
		{Key: "requested_rate", Label: "requested", Unit: "req/s", Prec: 2, Shows: InTable,
			Value: func(l *Level) *float64 { return l.RequestedRate }},
		{Key: "achieved_rate", Label: "achieved", Unit: "req/s", Better: HigherIsBetter, Prec: 2, Shows: InTable,
			Value: func(l *Level) *float64 { return l.AchievedRate }},
		ms("schedule_lag_p99_ms", "schedule lag p99", func(l *Level) *float64 { return l.ScheduleLagP99Ms }),
		ms("schedule_lag_p50_ms", "schedule lag p50", func(l *Level) *float64 { return l.ScheduleLagP50Ms }),
		ms("ttft_sched_p50_ms", "TTFT sched p50", func(l *Level) *float64 { return l.TTFTSchedP50Ms }),
		ms("ttft_sched_p99_ms", "TTFT sched p99", func(l *Level) *float64 { return l.TTFTSchedP99Ms }),
		// The send-time E2E mean again, beside the scheduled one (the
		// latency section has it for every level).
		ms("", "E2E mean", func(l *Level) *float64 {
			if l.E2ESchedMeanMs == nil {
				return nil
			}
			return l.E2EMeanMs
		}),
		ms("e2e_sched_mean_ms", "E2E sched mean", func(l *Level) *float64 { return l.E2ESchedMeanMs }),
		ms("e2e_sched_p50_ms", "E2E sched p50", func(l *Level) *float64 { return l.E2ESchedP50Ms }),
		ms("e2e_sched_p99_ms", "E2E sched p99", func(l *Level) *float64 { return l.E2ESchedP99Ms }),
		{Key: "client_limited", Label: "client limited", Shows: InTable, Text: func(l *Level) string { return yesNo(l.ClientLimited) }},
		{Key: "peak_requests_running", Label: "peak running", Prec: -1, Shows: InTable,
			Value: func(l *Level) *float64 { return l.PeakRequestsRunning }},
		{Key: "peak_requests_waiting", Label: "peak waiting", Prec: -1, Shows: InTable,
			Value: func(l *Level) *float64 { return l.PeakRequestsWaiting }},
		{Key: "errors_by_reason", Label: "errors by reason", Shows: InTable, Text: func(l *Level) string { return reasons(l.ErrorsByReason) }},
	}
}

// cacheAndGoodputFigures are the prefix cache's, the reasoning split's,
// goodput's and the search's figures.
func cacheAndGoodputFigures() []FigureSpec {
	pct := func(key Figure, label string, get func(*Level) *float64) FigureSpec {
		return FigureSpec{Key: key, Label: label, Unit: "%", Better: HigherIsBetter, Prec: 1, Shows: InTable, Value: get}
	}
	ms := func(key Figure, label string, get func(*Level) *float64) FigureSpec {
		return FigureSpec{Key: key, Label: label, Unit: "ms", Better: LowerIsBetter, Prec: 1, Shows: InTable, Value: get}
	}
	tok := func(key Figure, label string, get func(*Level) *int) FigureSpec {
		return FigureSpec{Key: key, Label: label, Unit: "tok", Prec: -1, Shows: InTable, Value: func(l *Level) *float64 { return countPtr(get(l)) },
			Estimated: func(l *Level) bool { return l.ReasoningTokensEstimated }}
	}
	return []FigureSpec{
		// Prompt tokens sent show beside the cached ones, where some
		// server said.
		{Key: "prompt_tokens_sent", Label: "prompt sent", Unit: "tok", Header: "prompt tok sent", Prec: -1, Shows: InTable,
			Value: func(l *Level) *float64 {
				if l.PromptTokensCached == nil && l.PrefixCacheHitRate == nil {
					return nil
				}
				return countPtr(l.PromptTokensSent)
			}},
		{Key: "prompt_tokens_cached", Label: "cached prompt", Unit: "tok", Prec: -1, Shows: InTable,
			Value: func(l *Level) *float64 { return countPtr(l.PromptTokensCached) }},
		pct("prompt_cache_hit_rate", "prompt cache hit", func(l *Level) *float64 { return l.PromptCacheHitRate }),
		pct("prefix_cache_hit_rate", "server prefix cache hit", func(l *Level) *float64 { return l.PrefixCacheHitRate }),
		ms("ttfr_p50_ms", "TTFR p50", func(l *Level) *float64 { return l.TTFRP50Ms }),
		ms("ttfa_p50_ms", "TTFA p50", func(l *Level) *float64 { return l.TTFAP50Ms }),
		ms("ttfa_p95_ms", "TTFA p95", func(l *Level) *float64 { return l.TTFAP95Ms }),
		tok("reasoning_tokens", "reasoning", func(l *Level) *int { return l.ReasoningTokens }),
		tok("answer_tokens", "answer", func(l *Level) *int { return l.AnswerTokens }),
		{Key: "goodput_req_s", Label: "goodput", Unit: "req/s", Better: HigherIsBetter, Prec: 2, Shows: InTable,
			Value: func(l *Level) *float64 { return l.GoodputReqS }},
		pct("goodput_fraction", "good", func(l *Level) *float64 { return l.GoodputFraction }),
		{Key: "repeats", Label: "repeats", Prec: -1, Shows: InTable,
			Value: func(l *Level) *float64 {
				if l.Repeats == 0 {
					return nil
				}
				return count(l.Repeats)
			}},
		{Key: "saturated", Label: "saturated", Shows: InTable, Text: func(l *Level) string { return l.Saturated }},
	}
}

func count(n int) *float64 {
	v := float64(n)
	return &v
}

func countPtr(n *int) *float64 {
	if n == nil {
		return nil
	}
	return count(*n)
}

// energyFigures are a level's GPU energy and cost: shown where a level has
// them (a GPU with a power sensor; a --price-per-hour or --price-per-kwh).
// docs/features.md says how each is measured.
func energyFigures() []FigureSpec {
	const shows = InTable | InCSV | InGoBench | InCompare
	fig := func(key Figure, label, unit string, better Better, prec int, get func(*Level) *float64) FigureSpec {
		return FigureSpec{Key: key, Label: label, Unit: unit, Better: better, Prec: prec, Shows: shows, Value: get}
	}
	return []FigureSpec{
		fig("energy_j", "energy", "J", LowerIsBetter, 0, func(l *Level) *float64 { return l.EnergyJ }),
		fig("joules_per_output_token", "J/out tok", "", LowerIsBetter, 3, func(l *Level) *float64 { return l.JoulesPerOutputToken }),
		fig("mean_power_w", "mean", "W", LowerIsBetter, 1, func(l *Level) *float64 { return l.MeanPowerW }),
		fig("peak_power_w", "peak", "W", LowerIsBetter, 1, func(l *Level) *float64 { return l.PeakPowerW }),
		fig("tok_s_per_watt", "tok/s per W", "", HigherIsBetter, 3, func(l *Level) *float64 { return l.TokSPerWatt }),
		fig("cost_usd_per_mtok", "$/M out tok", "", LowerIsBetter, 4, func(l *Level) *float64 { return l.CostUSDPerMTok }),
	}
}
