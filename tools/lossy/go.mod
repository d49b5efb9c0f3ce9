// kperf's loss fault's helper (main.go): a kernel nftables rule through Google's nftables package, built by
// `make lossy` from these pinned versions.
module kperf/tools/lossy

go 1.22

require (
	github.com/google/nftables v0.3.0
	golang.org/x/sys v0.28.0
)

require (
	github.com/google/go-cmp v0.6.0 // indirect
	github.com/mdlayher/netlink v1.7.3-0.20250113171957-fbb4dce95f42 // indirect
	github.com/mdlayher/socket v0.5.0 // indirect
	golang.org/x/net v0.33.0 // indirect
	golang.org/x/sync v0.6.0 // indirect
)
