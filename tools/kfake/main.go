// kfake-broker: franz-go's kfake, an in-memory Kafka-API broker that is not Apache Kafka, on one port of
// 127.0.0.1. kperf's tests measure on it to show what kperf records and refuses on a Kafka-API cluster
// (tests/cluster/test_kafka_api.py; built by `make kfake`). It prints its listen address once ready and runs
// until SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

func main() {
	port := flag.Int("port", 9392, "port on 127.0.0.1 (0: each broker on a free port)")
	brokers := flag.Int("brokers", 1, "brokers (each on its own port, from -port up)")
	limit := flag.String("max-versions", "",
		"API versions to answer at most, as key=version,... (version -1: the API is not answered at all), "+
			"to stand for a cluster that lacks a feature")
	flag.Parse()
	ports := make([]int, *brokers)
	for i := range ports {
		if *port != 0 {
			ports[i] = *port + i
		}
	}
	opts := []kfake.Opt{kfake.NumBrokers(*brokers), kfake.Ports(ports...), kfake.AllowAutoTopicCreation()}
	if *limit != "" {
		versions, err := capped(*limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfake-broker: -max-versions:", err)
			os.Exit(2)
		}
		opts = append(opts, kfake.MaxVersions(versions))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake-broker:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(c.ListenAddrs(), ","))
	s := make(chan os.Signal, 1)
	signal.Notify(s, os.Interrupt, syscall.SIGTERM)
	<-s
	c.Close()
}

// capped is the newest versions kfake's client library knows, with each key=version of spec applied.
func capped(spec string) (*kversion.Versions, error) {
	versions := kversion.Tip()
	for _, pair := range strings.Split(spec, ",") {
		key, version, found := strings.Cut(pair, "=")
		k, kerr := strconv.ParseInt(strings.TrimSpace(key), 10, 16)
		v, verr := strconv.ParseInt(strings.TrimSpace(version), 10, 16)
		if !found || kerr != nil || verr != nil {
			return nil, fmt.Errorf("%q is not key=version", pair)
		}
		versions.SetMaxKeyVersion(int16(k), int16(v))
	}
	return versions, nil
}
