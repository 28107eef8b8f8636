import { loadSourcedObjects } from '/work/main/dist/cluster/load-objects.js'
await loadSourcedObjects(['/root/go/pkg/mod/github.com/stacklok/toolhive@v0.63.0/deploy/charts/operator-crds/files/crds'])
