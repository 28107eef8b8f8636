// Wrapper module for building kube-apiserver and kube-controller-manager from the Go module proxy
// (see ../../binaries.ts). The builder copies this file into its cache, requires k8s.io/kubernetes
// at the chosen release, adds one `replace` per staging module that release's go.mod pins at
// v0.0.0, and tidies. Both commands are tools here so that tidying keeps the go.sum lines of
// either, whichever is built first; they come from one module, so the versions selected are the
// same with or without the second.
module mcp-admission.local/e2e/kube

go 1.25

tool (
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kube-controller-manager
)
