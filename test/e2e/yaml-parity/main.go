// Command yaml-parity reads object files the way kubectl 1.37 does and prints what it read, for
// the differential test of the CLI's own reader (../yaml-parity.test.ts).
//
// kubectl reads a manifest file (k8s.io/cli-runtime's FileVisitor and StreamVisitor) as follows:
// the bytes go through a UTF-8 decoder that honours a byte order mark (a UTF-16 one switches the
// decoding; invalid UTF-8 becomes U+FFFD), then apimachinery's YAMLOrJSONDecoder splits the
// stream into documents (a JSON stream, or YAML documents split on `---` lines, each converted
// by sigs.k8s.io/yaml), each trimmed and skipped when empty or null, and each object is decoded
// as unstructured JSON (integers as int64, other numbers as float64). This program does the same
// with the same modules at the versions Kubernetes v1.37 pins.
//
// Input (stdin): a JSON array of {"name", "base64"} files. Output (stdout): a JSON array of
// {"name", "documents": [JSON text…]} or {"name", "documents": [...], "error": "…"}.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/yaml"
)

type file struct {
	Name   string `json:"name"`
	Base64 string `json:"base64"`
}

type result struct {
	Name      string   `json:"name"`
	Documents []string `json:"documents"`
	Error     string   `json:"error,omitempty"`
}

func main() {
	var files []file
	if err := json.NewDecoder(os.Stdin).Decode(&files); err != nil {
		fmt.Fprintf(os.Stderr, "yaml-parity: reading the corpus: %v\n", err)
		os.Exit(2)
	}
	results := make([]result, 0, len(files))
	for _, f := range files {
		content, err := base64.StdEncoding.DecodeString(f.Base64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "yaml-parity: %s: %v\n", f.Name, err)
			os.Exit(2)
		}
		documents, err := read(content)
		r := result{Name: f.Name, Documents: documents}
		if err != nil {
			r.Error = err.Error()
		}
		results = append(results, r)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", " ")
	if err := out.Encode(results); err != nil {
		fmt.Fprintf(os.Stderr, "yaml-parity: %v\n", err)
		os.Exit(2)
	}
}

// read returns the objects of one file as kubectl reads them, each as JSON text, and the error
// kubectl would stop at (the documents before it are returned too).
func read(content []byte) (documents []string, err error) {
	// A panic in a decoder is a refusal too (kubectl would crash on it): say so rather than die.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	// cli-runtime's FileVisitor: the UTF-8 decoder with BOM override.
	reader := transform.NewReader(bytes.NewReader(content), unicode.BOMOverride(unicode.UTF8.NewDecoder()))
	// cli-runtime's StreamVisitor: 4096 bytes are looked at to guess a JSON stream.
	decoder := yaml.NewYAMLOrJSONDecoder(reader, 4096)
	for {
		ext := runtime.RawExtension{}
		if err := decoder.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return documents, nil
			}
			return documents, err
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		// unstructured.UnstructuredJSONScheme decodes an object this way; anything but an object
		// is an error there ("cannot unmarshal … into Go value of type map[string]interface {}").
		object := map[string]interface{}{}
		if err := utiljson.Unmarshal(raw, &object); err != nil {
			return documents, err
		}
		text, err := json.Marshal(object)
		if err != nil {
			return documents, err
		}
		documents = append(documents, string(text))
	}
}
