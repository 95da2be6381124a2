package report

// SimulatedMark is the word every output shows beside a result the
// simulator predicted (run --backend sim) rather than a server measured,
// so that a shared table, chart or page cannot pass a prediction off as a
// measurement.
const SimulatedMark = "SIMULATED"

// Simulated reports whether the run was predicted by servebench's
// simulator rather than measured on a server.
func (r *Run) Simulated() bool {
	return r != nil && r.Kind == KindSweep && r.Sweep != nil && r.Sweep.Simulated
}

// SimulatedLabel is the run's label with SimulatedMark after it when the
// run was simulated: "vllm-chat (SIMULATED)".
func (r *Run) SimulatedLabel() string {
	if r.Simulated() {
		return r.Label + " (" + SimulatedMark + ")"
	}
	return r.Label
}

// Simulated reports whether some run of the set was simulated.
func (s *Set) Simulated() bool {
	for _, r := range s.Runs {
		if r.Simulated() {
			return true
		}
	}
	return false
}
