// Command go-peer is the webhook a team would otherwise write: controller-runtime's manager and
// webhook server doing mcp-admission's work for proxy Deployments and RunConfig ConfigMaps
// (mutate.go), so that `npm run bench:cluster` can set mcp-admission's costs beside it in the same
// run, through the same API server. It is a benchmark peer, not a product: it serves /mutate only
// (the scale cap and validation are not compared) and admits everything else unchanged.
//
// Like mcp-admission it reads the owner and the RunConfig ConfigMap live on every proxy Deployment
// review (the manager's API reader: client-go, no cache), and keeps informer caches of the four
// ToolHive kinds, trimmed to what mcp-admission's cache keeps. It is ready (/readyz on the metrics
// address, beside controller-runtime's webhook metrics) once those caches have synced and the
// webhook server serves.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// cachedKinds are what mcp-admission's view lists and watches, at the versions the bench's CRD
// fixtures prefer (mcp-admission discovers them; a Go webhook would name them).
var cachedKinds = []schema.GroupVersionKind{
	{Group: toolhiveGroup, Version: workloadVersion, Kind: "MCPServer"},
	{Group: toolhiveGroup, Version: workloadVersion, Kind: "MCPRemoteProxy"},
	{Group: toolhiveGroup, Version: workloadVersion, Kind: "VirtualMCPServer"},
	{Group: toolhiveGroup, Version: "v1alpha1", Kind: "MCPWebhookConfig"},
}

func main() {
	port := flag.Int("port", 9443, "HTTPS port of the webhook")
	probeAddress := flag.String("probe-address", "127.0.0.1:8080", "address of /metrics, /readyz and /healthz")
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key")
	flag.Parse()
	ctrl.SetLogger(zap.New())
	if err := run(*port, *probeAddress, *certDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(port int, probeAddress, certDir string) error {
	// The cluster from KUBECONFIG, as the bench gives it: mcp-admission's service account.
	config, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	var synced atomic.Bool
	server := webhook.NewServer(webhook.Options{
		Host: "127.0.0.1", Port: port, CertDir: certDir, CertName: "tls.crt", KeyName: "tls.key",
	})
	ready := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !synced.Load() || server.StartedChecker()(r) != nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	manager, err := ctrl.NewManager(config, ctrl.Options{
		Scheme: scheme,
		Metrics: metricsserver.Options{
			BindAddress:   probeAddress,
			ExtraHandlers: map[string]http.Handler{"/readyz": ready, "/healthz": ready},
		},
		HealthProbeBindAddress: "0",
		WebhookServer:          server,
		Cache:                  cache.Options{DefaultTransform: trimForCache},
	})
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	for _, gvk := range cachedKinds {
		object := &unstructured.Unstructured{}
		object.SetGroupVersionKind(gvk)
		if _, err := manager.GetCache().GetInformer(ctx, object); err != nil {
			return err
		}
	}
	// Through the manager: that is what adds the server to what it starts.
	manager.GetWebhookServer().Register("/mutate", &webhook.Admission{Handler: &mutator{reader: manager.GetAPIReader()}})
	go func() {
		synced.Store(manager.GetCache().WaitForCacheSync(ctx))
	}()
	return manager.Start(ctx)
}

// keptMetadata is what mcp-admission's cache keeps of an object's metadata (src/cluster/trim.ts).
var keptMetadata = []string{
	"name", "namespace", "uid", "resourceVersion", "generation", "labels", "annotations",
	"ownerReferences", "deletionTimestamp",
}

// trimForCache keeps what mcp-admission's cache keeps: the same memory for the same objects is
// then a question of the runtimes, not of what each chose to hold.
func trimForCache(object any) (any, error) {
	u, ok := object.(*unstructured.Unstructured)
	if !ok {
		return object, nil
	}
	metadata, _ := u.Object["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, field := range keptMetadata {
		if value, present := metadata[field]; present {
			kept[field] = value
		}
	}
	if annotations, ok := kept["annotations"].(map[string]any); ok {
		delete(annotations, "kubectl.kubernetes.io/last-applied-configuration")
	}
	trimmed := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": kept}
	for _, field := range []string{"spec", "status"} {
		if value, present := u.Object[field]; present {
			trimmed[field] = value
		}
	}
	u.Object = trimmed
	return u, nil
}
