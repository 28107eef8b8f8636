// Command cert-manager-e2e runs cert-manager's own controllers out of cluster against the e2e
// suite's API server: the issuing path (Issuer → Certificate → CertificateRequest → Secret) for
// the self-signed and CA issuers, and the CA injector for webhook configurations.
//
// cert-manager's command modules (controller-binary, cainjector-binary) are not served by the Go
// module proxy, but the controllers they wire up live in the root module's pkg/controller and
// register themselves on import. This command does the part of their Run functions the suite
// needs: build the controller context, construct the chosen controllers, start the shared
// informers, and start a controller-runtime manager with cainjector's reconcilers. Leader
// election is off (one replica), metrics are off; /readyz says when the caches have synced.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

func main() {
	// A FlagSet of our own: controller-runtime registers --kubeconfig on flag.CommandLine.
	flags := flag.NewFlagSet("cert-manager-e2e", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the API server to run against (required)")
	namespace := flags.String("namespace", "", "only watch this namespace, as cert-manager's --namespace (default: all)")
	clusterResourceNamespace := flags.String("cluster-resource-namespace", "kube-system",
		"where ClusterIssuers' Secrets live, as cert-manager's --cluster-resource-namespace")
	readyAddress := flags.String("ready-address", "127.0.0.1:0", "where to serve /readyz (loopback)")
	klog.InitFlags(flags) // -v, as cert-manager's own commands take it
	if err := flags.Parse(os.Args[1:]); err != nil || *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "usage: cert-manager-e2e --kubeconfig=FILE [--namespace=NS] [--ready-address=HOST:PORT] [-v=N]")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf.InitLogs()
	defer logf.FlushLogs()
	ctrl.SetLogger(logf.Log.WithName("cainjector")) // only cainjector's half uses controller-runtime
	ctx = logf.NewContext(ctx, logf.Log, "cert-manager-e2e")

	if err := run(ctx, options{
		kubeconfig:               *kubeconfig,
		namespace:                *namespace,
		clusterResourceNamespace: *clusterResourceNamespace,
		readyAddress:             *readyAddress,
	}); err != nil {
		logf.Log.Error(err, "cert-manager-e2e failed")
		logf.FlushLogs()
		os.Exit(1)
	}
}

type options struct {
	kubeconfig               string
	namespace                string
	clusterResourceNamespace string
	readyAddress             string
}

func run(ctx context.Context, opts options) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", opts.kubeconfig, err)
	}
	listener, err := net.Listen("tcp", opts.readyAddress)
	if err != nil {
		return fmt.Errorf("listening for /readyz: %w", err)
	}

	group, ctx := errgroup.WithContext(ctx)
	controllers, err := startControllers(ctx, group, opts)
	if err != nil {
		return err
	}
	injector, err := startCAInjector(ctx, group, restConfig, opts.namespace)
	if err != nil {
		return err
	}

	var ready atomic.Bool
	server := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/readyz" && ready.Load() {
				fmt.Fprintln(w, "ok")
				return
			}
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	group.Go(func() error {
		if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	group.Go(func() error {
		<-ctx.Done()
		return server.Close()
	})
	group.Go(func() error {
		// Ready once both halves have their caches: before that a Certificate would wait anyway,
		// but the suite should know the process is working rather than merely running.
		// Both waits end early only when the process is stopping, which is no failure.
		if err := controllers.waitForCaches(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !injector.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		ready.Store(true)
		logf.FromContext(ctx).Info("ready", "address", listener.Addr().String())
		return nil
	})

	err = group.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
