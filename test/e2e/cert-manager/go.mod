// Wrapper module running cert-manager's own controllers for the e2e suite (see
// ../harness/cert-manager.ts). The builder copies this file and the .go files into its cache,
// requires github.com/cert-manager/cert-manager at the chosen release and tidies there, so no
// go.sum is kept in the repository.
module mcp-admission.local/e2e/cert-manager

go 1.26.0
