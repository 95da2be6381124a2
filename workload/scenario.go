// Package workload builds the requests servebench sends: prompts of an
// exact token length that are unique from their first word (so prefix
// caches cannot flatter a level), and images that are unique per request
// (so encoder caches cannot either); and, where a workload means requests to
// share prefixes, shared system prompts of an exact length (prefix groups)
// and multi-turn sessions that send the conversation so far (session.go).
// Everything is deterministic from a seed.
package workload

import "fmt"

// Scenario is a named workload with default prompt and output lengths.
type Scenario string

// Scenarios servebench knows.
const (
	// Text is short unique prompts and 128 output tokens: the method of
	// vllm-text-image-example.json.
	Text Scenario = "text"
	// Chat is 512 prompt tokens and 256 output tokens.
	Chat Scenario = "chat"
	// Long is 4096 prompt tokens and 256 output tokens.
	Long Scenario = "long"
	// Image is one generated image per request plus a short unique text,
	// and 128 output tokens.
	Image Scenario = "image"
	// Multiturn is sessions of several turns: each turn sends the whole
	// conversation so far (earlier user messages and the server's real
	// answers) and a new user message of 128 tokens, and asks for 64.
	Multiturn Scenario = "multiturn"
)

// Scenarios lists every Scenario in the order help texts show them.
var Scenarios = []Scenario{Text, Chat, Long, Image, Multiturn}

// ParseScenario returns the Scenario named s, or an error listing the valid
// names.
func ParseScenario(s string) (Scenario, error) {
	for _, sc := range Scenarios {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown scenario %q (want one of %v)", s, Scenarios)
}

// Defaults are a scenario's default lengths.
type Defaults struct {
	// PromptTokens is the target prompt length in tokens, as the server
	// counts them (chat template included). For Image it is the length of
	// the text part only, and is not enforced: the image's own tokens
	// depend on the model. For Multiturn it is the first turn's prompt;
	// later turns add the conversation so far.
	PromptTokens int
	// MaxTokens is the number of output tokens asked for.
	MaxTokens int
	// Images is the number of images per request.
	Images int
}

// Defaults returns the scenario's default lengths.
func (s Scenario) Defaults() Defaults {
	switch s {
	case Chat:
		return Defaults{PromptTokens: 512, MaxTokens: 256}
	case Long:
		return Defaults{PromptTokens: 4096, MaxTokens: 256}
	case Image:
		return Defaults{PromptTokens: 32, MaxTokens: 128, Images: 1}
	case Multiturn:
		return Defaults{PromptTokens: 128, MaxTokens: 64}
	default:
		return Defaults{PromptTokens: 32, MaxTokens: 128}
	}
}

// BatchWorkload is the scenario's name in the batch-method records of
// vllm-text-image-example.json ("text", "one_image_per_request").
func (s Scenario) BatchWorkload() string {
	if s == Image {
		return "one_image_per_request"
	}
	return string(s)
}
