package main

// The rules of docs/enforcement.md#the-runconfig-checksum and
// docs/enforcement.md#proxy-deployments-field-by-field as mcp-admission applies them
// (src/policy/proxy-deployment.ts, generation-env.ts, proxy-owner.ts, content-checksum.ts), written
// the way a Go webhook would: decode the request object, change it, and let controller-runtime diff
// the two into a JSON Patch. The object is decoded into maps, not an apps/v1 Deployment: a typed
// round trip adds what the request did not carry (`creationTimestamp: null`, `status: {}`), and the
// patch would then not be the one mcp-admission returns, which the bench checks before it times
// anything.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const (
	toolhiveGroup      = "toolhive.stacklok.dev"
	workloadVersion    = "v1beta1"
	contentChecksum    = "toolhive.stacklok.dev/content-checksum"
	runConfigChecksum  = "toolhive.stacklok.dev/runconfig-checksum"
	generationKey      = "toolhive.stacklok.dev/mcpserver-generation"
	generationEnv      = "THV_MCPSERVER_GENERATION"
	componentLabel     = "toolhive.stacklok.io/component"
	proxyContainer     = "toolhive"
	gracePeriodSeconds = 30
	// liveReadDeadline is mcp-admission's (src/admission/deadline.ts): well inside the 5 s timeout.
	liveReadDeadline = 2 * time.Second
)

// runConfigSuffix is each workload kind's RunConfig ConfigMap name suffix
// (docs/enforcement.md#which-objects-it-recognises).
var runConfigSuffix = map[string]string{
	"MCPServer":        "-runconfig",
	"MCPRemoteProxy":   "-runconfig",
	"VirtualMCPServer": "-vmcp-config",
}

type mutator struct {
	reader client.Reader
}

func (m *mutator) Handle(ctx context.Context, request admission.Request) admission.Response {
	if request.SubResource != "" ||
		(request.Operation != admissionv1.Create && request.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	switch request.Kind {
	case metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}:
		return m.deployment(ctx, request)
	case metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}:
		return runConfigMap(request)
	}
	return admission.Allowed("")
}

// owner is a proxy Deployment's controller reference to a ToolHive workload.
type owner struct {
	kind, name, uid string
}

// proxyOwnerOf is the ToolHive workload that controls `object`, or nil
// (docs/enforcement.md#which-objects-it-recognises).
func proxyOwnerOf(object map[string]any) *owner {
	if object["apiVersion"] != "apps/v1" || object["kind"] != "Deployment" {
		return nil
	}
	metadata, _ := object["metadata"].(map[string]any)
	references, _ := metadata["ownerReferences"].([]any)
	for _, each := range references {
		reference, _ := each.(map[string]any)
		if reference == nil || reference["controller"] != true {
			continue
		}
		apiVersion, _ := reference["apiVersion"].(string)
		kind, _ := reference["kind"].(string)
		name, _ := reference["name"].(string)
		uid, _ := reference["uid"].(string)
		if strings.SplitN(apiVersion, "/", 2)[0] != toolhiveGroup || runConfigSuffix[kind] == "" || name == "" {
			return nil
		}
		return &owner{kind: kind, name: name, uid: uid}
	}
	return nil
}

func (m *mutator) deployment(ctx context.Context, request admission.Request) admission.Response {
	var object map[string]any
	if err := json.Unmarshal(request.Object.Raw, &object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	reference := proxyOwnerOf(object)
	spec, _ := object["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if reference == nil || template == nil {
		return admission.Allowed("")
	}
	workload, configMap, err := m.readLive(ctx, request.Namespace, reference)
	if err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err)
	}
	var warnings []string
	if workload != nil && workload.GetUID() != "" && reference.uid != "" && string(workload.GetUID()) != reference.uid {
		workload = nil // another incarnation of the name
	}
	if workload == nil {
		warnings = append(warnings, fmt.Sprintf("%s %s not found: RunConfig checksum and generation not stamped", reference.kind, reference.name))
	} else if configMap != nil {
		setIn(template, "metadata", "annotations", runConfigChecksum, effectiveChecksum(configMap))
	} else {
		warnings = append(warnings, fmt.Sprintf("ConfigMap %s not found: RunConfig checksum not stamped", reference.name+runConfigSuffix[reference.kind]))
	}
	podSpec, _ := template["spec"].(map[string]any)
	if reference.kind == "MCPServer" {
		if workload != nil {
			if generation := generationToStamp(workload.GetGeneration(), reference, request.OldObject.Raw); generation > 0 {
				setIn(template, "metadata", "annotations", generationKey, strconv.FormatInt(generation, 10))
			}
		}
		if podSpec != nil {
			setGenerationEnv(podSpec)
		}
	}
	if workload != nil && isStdio(workload) {
		if replicas, ok := spec["replicas"].(float64); ok && replicas > 1 {
			warnings = append(warnings, fmt.Sprintf("spec.replicas: stdio MCPServer %s supports 1 replica; set to 1 (was %s)", reference.name, strconv.FormatFloat(replicas, 'f', -1, 64)))
			spec["replicas"] = 1
		}
	}
	if podSpec != nil && podSpec["terminationGracePeriodSeconds"] == nil {
		podSpec["terminationGracePeriodSeconds"] = gracePeriodSeconds
	}
	return respond(request.Object.Raw, object, warnings)
}

// readLive reads the owner and its RunConfig ConfigMap from the API server, in parallel, within
// the deadline (docs/enforcement.md#read-live-not-from-the-cache); a missing object is nil, any
// other failure an error.
func (m *mutator) readLive(ctx context.Context, namespace string, reference *owner) (*unstructured.Unstructured, *corev1.ConfigMap, error) {
	ctx, cancel := context.WithTimeout(ctx, liveReadDeadline)
	defer cancel()
	workload := &unstructured.Unstructured{}
	workload.SetAPIVersion(toolhiveGroup + "/" + workloadVersion)
	workload.SetKind(reference.kind)
	configMap := &corev1.ConfigMap{}
	var workloadMissing, configMapMissing bool
	group, ctx := errgroup.WithContext(ctx)
	get := func(what, name string, into client.Object, missing *bool) func() error {
		return func() error {
			err := m.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, into)
			if apierrors.IsNotFound(err) {
				*missing = true
				return nil
			}
			if err != nil {
				return fmt.Errorf("cannot read %s %s/%s from the API server: %w", what, namespace, name, err)
			}
			return nil
		}
	}
	group.Go(get(reference.kind, reference.name, workload, &workloadMissing))
	group.Go(get("ConfigMap", reference.name+runConfigSuffix[reference.kind], configMap, &configMapMissing))
	if err := group.Wait(); err != nil {
		return nil, nil, err
	}
	if workloadMissing {
		workload = nil
	}
	if configMapMissing {
		configMap = nil
	}
	return workload, configMap, nil
}

// generationToStamp is the owner's generation, never below what the stored Deployment holds for
// the same owner uid; 0 when there is none to stamp.
func generationToStamp(generation int64, reference *owner, stored []byte) int64 {
	if generation < 1 {
		return 0
	}
	if len(stored) == 0 || reference.uid == "" {
		return generation
	}
	var old map[string]any
	if json.Unmarshal(stored, &old) != nil {
		return generation
	}
	storedOwner := proxyOwnerOf(old)
	if storedOwner == nil || storedOwner.uid != reference.uid {
		return generation
	}
	spec, _ := old["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	metadata, _ := template["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	text, _ := annotations[generationKey].(string)
	if stamped, err := strconv.ParseInt(text, 10, 64); err == nil && stamped > generation {
		return stamped
	}
	return generation
}

// setGenerationEnv makes the proxy container carry exactly one correct THV_MCPSERVER_GENERATION
// entry: a wrong one replaced where it stands, later duplicates dropped, a missing one appended.
func setGenerationEnv(podSpec map[string]any) {
	containers, _ := podSpec["containers"].([]any)
	var container map[string]any
	for _, each := range containers {
		if c, ok := each.(map[string]any); ok && c["name"] == proxyContainer {
			container = c
			break
		}
	}
	if container == nil {
		return
	}
	desired := map[string]any{
		"name": generationEnv,
		"valueFrom": map[string]any{"fieldRef": map[string]any{
			"apiVersion": "v1",
			"fieldPath":  "metadata.annotations['" + generationKey + "']",
		}},
	}
	env, ok := container["env"].([]any)
	if !ok {
		container["env"] = []any{desired}
		return
	}
	var matching []int
	for i, entry := range env {
		if e, ok := entry.(map[string]any); ok && e["name"] == generationEnv {
			matching = append(matching, i)
		}
	}
	if len(matching) == 0 {
		container["env"] = append(env, desired)
		return
	}
	if !reflect.DeepEqual(env[matching[0]], desired) {
		env[matching[0]] = desired
	}
	for _, i := range slices.Backward(matching[1:]) {
		env = slices.Delete(env, i, i+1)
	}
	container["env"] = env
}

func isStdio(workload *unstructured.Unstructured) bool {
	if workload.GetKind() != "MCPServer" {
		return false
	}
	transport, found, _ := unstructured.NestedFieldNoCopy(workload.Object, "spec", "transport")
	return !found || transport == nil || transport == "" || transport == "stdio"
}

// setIn sets root[a][b][key] = value when it differs, creating the maps only then.
func setIn(root map[string]any, a, b, key, value string) {
	first, _ := root[a].(map[string]any)
	if first == nil {
		first = map[string]any{}
		root[a] = first
	}
	second, _ := first[b].(map[string]any)
	if second == nil {
		second = map[string]any{}
		first[b] = second
	}
	if second[key] != value {
		second[key] = value
	}
}

// runConfigMap stamps the content checksum on a RunConfig ConfigMap
// (docs/enforcement.md#the-runconfig-checksum).
func runConfigMap(request admission.Request) admission.Response {
	configMap := &corev1.ConfigMap{}
	if err := json.Unmarshal(request.Object.Raw, configMap); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	component := configMap.Labels[componentLabel]
	if component != "run-config" && component != "vmcp-config" {
		return admission.Allowed("")
	}
	var object map[string]any
	if err := json.Unmarshal(request.Object.Raw, &object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	setIn(object, "metadata", "annotations", contentChecksum, checksumOf(configMap))
	return respond(request.Object.Raw, object, nil)
}

// effectiveChecksum is the checksum a ConfigMap carries, or the one its content gives.
func effectiveChecksum(configMap *corev1.ConfigMap) string {
	if stamped := configMap.Annotations[contentChecksum]; stamped != "" {
		return stamped
	}
	return checksumOf(configMap)
}

// checksumOf is SHA-256 over data, labels and annotations (minus the checksum), each in byte
// order of its keys, key then value, no separators; Go's string order is byte order.
func checksumOf(configMap *corev1.ConfigMap) string {
	hash := sha256.New()
	sections := []map[string]string{configMap.Data, configMap.Labels, configMap.Annotations}
	for i, section := range sections {
		for _, key := range slices.Sorted(maps.Keys(section)) {
			if i == 2 && key == contentChecksum {
				continue
			}
			hash.Write([]byte(key))
			hash.Write([]byte(section[key]))
		}
	}
	return hex.EncodeToString(hash.Sum(nil))
}

func respond(original []byte, object map[string]any, warnings []string) admission.Response {
	mutated, err := json.Marshal(object)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	response := admission.PatchResponseFromRaw(original, mutated)
	response.Warnings = warnings
	return response
}
