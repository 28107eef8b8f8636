package main

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// The issuers controllers find an issuer's implementation by its type; these register the
	// two the suite uses (cert-manager's command imports every one).
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// The controllers a Certificate from a self-signed or CA issuer goes through, by the names
// cert-manager registers them under (importing each package registers it):
var enabledControllers = []string{
	// Issuers' Ready condition; a CA issuer checks its Secret holds a CA.
	issuers.ControllerName,
	clusterissuers.ControllerName,
	// A Certificate's life: when to issue (trigger, which honours a manual Issuing condition),
	// the next private key (key-manager), the CertificateRequest (request-manager), the Secret
	// (issuing), the Ready condition (readiness) and old requests' clean-up (revision-manager).
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	// Requests need approval before any issuer signs them; cert-manager's own approver grants it.
	approver.ControllerName,
	// The signers.
	crselfsigned.CRControllerName,
	crca.CRControllerName,
}

// workers per controller: cert-manager's default (--concurrent-workers).
const workers = 5

type runningControllers struct {
	base *controllerpkg.Context
}

// startControllers builds cert-manager's controller context the way its controller command
// does, constructs the enabled controllers, runs them in group and starts the shared informers.
func startControllers(ctx context.Context, group *errgroup.Group, opts options) (*runningControllers, error) {
	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig: opts.kubeconfig,
		Namespace:  opts.namespace,
		IssuerOptions: controllerpkg.IssuerOptions{
			ClusterResourceNamespace: opts.clusterResourceNamespace,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("building cert-manager's controller context: %w", err)
	}
	base, err := factory.Build()
	if err != nil {
		return nil, err
	}
	known := controllerpkg.Known()
	for _, name := range enabledControllers {
		// As cert-manager: a namespace-scoped install cannot read cluster-scoped issuers.
		if opts.namespace != "" && name == clusterissuers.ControllerName {
			continue
		}
		construct, ok := known[name]
		if !ok {
			return nil, fmt.Errorf("cert-manager registers no controller named %q", name)
		}
		controller, err := construct(factory)
		if err != nil {
			return nil, fmt.Errorf("constructing controller %s: %w", name, err)
		}
		log := logf.FromContext(ctx).WithValues("controller", name)
		group.Go(func() error {
			log.Info("starting controller")
			return controller.Run(workers, ctx)
		})
	}
	// After construction: each controller asked the factories for the informers it needs.
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	return &runningControllers{base: base}, nil
}

func (r *runningControllers) waitForCaches(ctx context.Context) error {
	for informer, synced := range r.base.SharedInformerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("cache of %v did not sync", informer)
		}
	}
	for informer, synced := range r.base.KubeSharedInformerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("cache of %s did not sync", informer)
		}
	}
	return nil
}
