// Command upstream-parity runs ToolHive's own checks on the cases of the differential test
// (../upstream-parity.test.ts): composite tool definitions, remote URLs and Go templates, each
// judged by upstream's function at the release test/e2e/toolhive/releases.ts builds it against.
// It imports upstream's packages and copies none of their code: the point is to compare the
// TypeScript ports with the real thing.
//
// Input (stdin): a JSON array of cases, each one of
//
//	{"kind": "composite", "spec": {…}}            VirtualMCPCompositeToolDefinition spec
//	{"kind": "url", "url": "…", "allowPrivateEndpoint": true|false}
//	{"kind": "template", "text": "…"}
//
// Output (stdout): a JSON array of answers in the same order, each
//
//	composite: {"decodeError": "…"} when the spec does not unmarshal into the typed spec, else
//	           {"error": "…"} or {"error": null} from config.ValidateCompositeToolConfig("spec", …)
//	url:       {"error": "…"} or {"error": null} from validation.ValidateRemoteURL
//	template:  {"error": "…"} from config.ValidateTemplate, or {"error": null, "references": […]}
//	           from templates.ExtractReferences, sorted, or {"error": null, "extractPanic": "…"}
//	           when ExtractReferences panics on a template ValidateTemplate accepts
//
// A panic in upstream's composite validation is answered as {"panic": "…"}: the operator would
// crash on that input rather than judge it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/stacklok/toolhive/cmd/thv-operator/api/v1beta1"
	"github.com/stacklok/toolhive/cmd/thv-operator/pkg/validation"
	"github.com/stacklok/toolhive/pkg/templates"
	"github.com/stacklok/toolhive/pkg/vmcp/config"
)

type testCase struct {
	Kind                 string          `json:"kind"`
	Spec                 json.RawMessage `json:"spec,omitempty"`
	URL                  string          `json:"url,omitempty"`
	AllowPrivateEndpoint bool            `json:"allowPrivateEndpoint,omitempty"`
	Text                 string          `json:"text,omitempty"`
}

type answer struct {
	// Error is upstream's error text, null when upstream accepts.
	Error        *string  `json:"error"`
	DecodeError  string   `json:"decodeError,omitempty"`
	References   []string `json:"references,omitempty"`
	ExtractPanic string   `json:"extractPanic,omitempty"`
	Panic        string   `json:"panic,omitempty"`
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintf(os.Stderr, "upstream-parity: reading the cases: %v\n", err)
		os.Exit(2)
	}
	answers := make([]answer, 0, len(cases))
	for i, c := range cases {
		a, err := judge(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "upstream-parity: case %d: %v\n", i, err)
			os.Exit(2)
		}
		answers = append(answers, a)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintf(os.Stderr, "upstream-parity: %v\n", err)
		os.Exit(2)
	}
}

// judge runs upstream's check for one case. A panic in upstream's code is reported as the answer
// (the operator would crash on that input), not as a failure of this program.
func judge(c testCase) (a answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			a = answer{Panic: fmt.Sprint(p)}
		}
	}()
	switch c.Kind {
	case "composite":
		var spec v1beta1.VirtualMCPCompositeToolDefinitionSpec
		if err := json.Unmarshal(c.Spec, &spec); err != nil {
			return answer{DecodeError: err.Error()}, nil
		}
		return answer{Error: text(config.ValidateCompositeToolConfig("spec", &spec.CompositeToolConfig))}, nil
	case "url":
		options := validation.ValidateRemoteURLOptions{AllowPrivateEndpoint: c.AllowPrivateEndpoint}
		return answer{Error: text(validation.ValidateRemoteURL(c.URL, options))}, nil
	case "template":
		if err := config.ValidateTemplate(c.Text); err != nil {
			return answer{Error: text(err)}, nil
		}
		return extract(c.Text)
	}
	return answer{}, fmt.Errorf("unknown kind %q", c.Kind)
}

// extract runs templates.ExtractReferences on a template ValidateTemplate accepted.
func extract(text string) (a answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			a = answer{ExtractPanic: fmt.Sprint(p)}
		}
	}()
	references, err := templates.ExtractReferences(text)
	if err != nil {
		return answer{}, fmt.Errorf("ValidateTemplate accepts %q, ExtractReferences refuses it: %w", text, err)
	}
	sort.Strings(references)
	return answer{References: references}, nil
}

func text(err error) *string {
	if err == nil {
		return nil
	}
	message := err.Error()
	return &message
}
