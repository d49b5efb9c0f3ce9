// lossy drops a share of the TCP packets to and from one port of this host, with a kernel nftables rule (random
// numbers compared against the share), so kperf's loss fault reaches a broker's client and replication traffic
// without a proxy in the way. Root only, like any netfilter change. One table per port, named kperf-loss-PORT:
//
//	lossy add PORT PER_MILLE   drop PER_MILLE of each 1000 packets to or from PORT (replacing an earlier rule)
//	lossy remove PORT          remove that port's table (none is fine)
//	lossy list                 print the ports that have one
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

const prefix = "kperf-loss-"

func table(port uint16) *nftables.Table {
	return &nftables.Table{Family: nftables.TableFamilyINet, Name: fmt.Sprintf("%s%d", prefix, port)}
}

// drop matches TCP packets whose port at offset (0: source, 2: destination) is port, and drops perMille of 1000.
func drop(t *nftables.Table, c *nftables.Chain, offset uint32, port uint16, perMille uint32) *nftables.Rule {
	return &nftables.Rule{Table: t, Chain: c, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: offset, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.Numgen{Register: 1, Modulus: 1000, Type: unix.NFT_NG_RANDOM},
		// The kernel compares registers byte by byte: the host-order number turned big-endian first, as nft does.
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: binaryutil.BigEndian.PutUint32(perMille)},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}}
}

func ports(conn *nftables.Conn) ([]string, error) {
	tables, err := conn.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, t := range tables {
		if strings.HasPrefix(t.Name, prefix) {
			found = append(found, strings.TrimPrefix(t.Name, prefix))
		}
	}
	return found, nil
}

func run(args []string) error {
	conn, err := nftables.New()
	if err != nil {
		return err
	}
	if len(args) == 1 && args[0] == "list" {
		found, err := ports(conn)
		if err == nil && len(found) > 0 {
			fmt.Println(strings.Join(found, " "))
		}
		return err
	}
	if len(args) < 2 {
		return fmt.Errorf("usage: lossy add PORT PER_MILLE | remove PORT | list")
	}
	port, err := strconv.ParseUint(args[1], 10, 16)
	if err != nil || port == 0 {
		return fmt.Errorf("not a port: %q", args[1])
	}
	t := table(uint16(port))
	found, err := ports(conn)
	if err != nil {
		return err
	}
	for _, p := range found {
		if p == args[1] {
			conn.DelTable(t)
		}
	}
	switch {
	case args[0] == "remove" && len(args) == 2:
	case args[0] == "add" && len(args) == 3:
		perMille, err := strconv.ParseUint(args[2], 10, 32)
		if err != nil || perMille < 1 || perMille > 999 {
			return fmt.Errorf("the share dropped must be 1 to 999 per mille, got %q", args[2])
		}
		conn.AddTable(t)
		// On the input hook: a packet dropped on output fails its sender's transmit with an error, and TCP sends it
		// again at once; dropped on its way in it is lost as on a wire, each loopback packet passing here once.
		c := conn.AddChain(&nftables.Chain{Name: "input", Table: t, Type: nftables.ChainTypeFilter,
			Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter})
		conn.AddRule(drop(t, c, 2, uint16(port), uint32(perMille)))
		conn.AddRule(drop(t, c, 0, uint16(port), uint32(perMille)))
	default:
		return fmt.Errorf("usage: lossy add PORT PER_MILLE | remove PORT | list")
	}
	return conn.Flush()
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "lossy:", err)
		os.Exit(1)
	}
}
