// Command promql-selectors parses PromQL expressions with Prometheus's own parser and lists the
// series selectors of each (the metric, and the labels its matchers test), so the monitoring
// tests can check a dashboard's and the alerts' expressions against what a live /metrics exports
// without reading PromQL with regular expressions. It reads a JSON array of expressions on
// standard input and writes a JSON array of {"selectors": [{"metric", "labels"}], "error"} in the
// same order. It exits 0 even when an expression does not parse: that is an answer, in "error".
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

type selector struct {
	Metric string   `json:"metric"`
	Labels []string `json:"labels"`
}

type result struct {
	Selectors []selector `json:"selectors"`
	Error     string     `json:"error,omitempty"`
}

func main() {
	var expressions []string
	if err := json.NewDecoder(os.Stdin).Decode(&expressions); err != nil {
		fmt.Fprintf(os.Stderr, "promql-selectors: standard input is not a JSON array of strings: %v\n", err)
		os.Exit(2)
	}
	// The parser Prometheus evaluates rules with, without experimental functions or syntax.
	promql := parser.NewParser(parser.Options{})
	results := make([]result, 0, len(expressions))
	for _, expression := range expressions {
		results = append(results, selectors(promql, expression))
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintf(os.Stderr, "promql-selectors: %v\n", err)
		os.Exit(1)
	}
}

func selectors(promql parser.Parser, expression string) result {
	expr, err := promql.ParseExpr(expression)
	if err != nil {
		return result{Selectors: []selector{}, Error: err.Error()}
	}
	found := []selector{}
	var problem string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vector, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := metricName(vector)
		if name == "" && problem == "" {
			// A selector by labels alone ({job="x"}) names no metric: nothing to check it against.
			problem = fmt.Sprintf("selector %s names no metric", vector.String())
		}
		tested := []string{}
		for _, matcher := range vector.LabelMatchers {
			if matcher.Name != labels.MetricName {
				tested = append(tested, matcher.Name)
			}
		}
		sort.Strings(tested)
		found = append(found, selector{Metric: name, Labels: tested})
		return nil
	})
	return result{Selectors: found, Error: problem}
}

// metricName is the selector's metric, written as `name{…}` or as an equality on __name__.
func metricName(vector *parser.VectorSelector) string {
	if vector.Name != "" {
		return vector.Name
	}
	for _, matcher := range vector.LabelMatchers {
		if matcher.Name == labels.MetricName && matcher.Type == labels.MatchEqual {
			return matcher.Value
		}
	}
	return ""
}
