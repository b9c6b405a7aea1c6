// The etcd server that Kubernetes v1.35.4 requires, built from its Go module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
