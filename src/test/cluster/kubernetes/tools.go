//go:build tools

// Blank imports that make `go mod tidy` keep the control plane's packages.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
