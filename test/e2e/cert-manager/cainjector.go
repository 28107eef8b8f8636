package main

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

// startCAInjector runs cert-manager's CA injector reconcilers in a controller-runtime manager,
// set up as its cainjector command sets it up, for the two webhook configuration kinds only
// (APIServices and CRD conversion webhooks are not what the suite tests).
func startCAInjector(ctx context.Context, group *errgroup.Group, restConfig *rest.Config, namespace string) (ctrl.Manager, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))  // webhook configurations, Secrets
	utilruntime.Must(cmscheme.AddToScheme(scheme)) // Certificates (the inject-ca-from source)

	var namespaces map[string]cache.Config
	if namespace != "" {
		namespaces = map[string]cache.Config{namespace: {}}
	}
	manager, err := ctrl.NewManager(util.RestConfigWithUserAgent(restConfig, "cainjector"), ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			ReaderFailOnMissingInformer: true,
			DefaultNamespaces:           namespaces,
		},
		// As cainjector: Secrets are read from the API server, never cached whole; its watches on
		// them are metadata-only.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		// One replica, out of cluster: no leader election and no metrics listener.
		LeaderElection: false,
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cainjector manager: %w", err)
	}
	if err := cainjector.RegisterAllInjectors(ctx, manager, cainjector.SetupOptions{
		Namespace:                    namespace,
		EnableCertificatesDataSource: true, // cert-manager.io/inject-ca-from names a Certificate
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
		},
	}); err != nil {
		return nil, fmt.Errorf("registering cainjector's reconcilers: %w", err)
	}
	group.Go(func() error { return manager.Start(ctx) })
	return manager, nil
}
