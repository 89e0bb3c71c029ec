package main

import (
	"context"
	"flag"
	"io"
	"slices"
	"strings"

	"wharf/cmd/wharf/internal/jolokiaclient"
)

const connectionsUsage = `Usage:
  wharf connections [flags]

A table of the client connections: Client ID, Remote Address, User and
Protocol (the connector the client came through: openwire, stomp, mqtt,
amqp, ...), from the connection MBeans of connector=clientConnectors.
--json prints a list of objects with the same fields.
` + adminCommon

// connectionRow is one client connection; its JSON is --json's.
type connectionRow struct {
	ClientID      string `json:"clientId"`
	RemoteAddress string `json:"remoteAddress"`
	User          string `json:"user"`
	Protocol      string `json:"protocol"`
}

// runConnections is `wharf connections`.
func runConnections(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("connections", flag.ContinueOnError)
	o := addAdminFlags(fs)
	pos, err := parseAdmin("connections", fs, args, connectionsUsage, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("connections takes no arguments, got %q", pos)
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		// Each connection has a bean by client id and one by remote
		// address: the first suffices.
		beans, err := a.c.ReadAll(ctx, a.brokerBean("connector=clientConnectors,connectorName=*,connectionViewType=clientId,connectionName=*"),
			"ClientId", "RemoteAddress", "UserName")
		if err != nil {
			return err
		}
		rows := []connectionRow{}
		for name, b := range beans {
			on, err := jolokiaclient.ParseName(name)
			if err != nil {
				return err
			}
			r := connectionRow{Protocol: on.Props["connectorName"]}
			r.ClientID, _ = b["ClientId"].(string)
			r.RemoteAddress, _ = b["RemoteAddress"].(string)
			r.User, _ = b["UserName"].(string)
			rows = append(rows, r)
		}
		slices.SortFunc(rows, func(x, y connectionRow) int {
			if c := strings.Compare(x.ClientID, y.ClientID); c != 0 {
				return c
			}
			return strings.Compare(x.RemoteAddress, y.RemoteAddress)
		})
		if o.json {
			return printJSON(stdout, rows)
		}
		table := make([][]string, len(rows))
		for i, r := range rows {
			table[i] = []string{r.ClientID, r.RemoteAddress, r.User, r.Protocol}
		}
		printTable(stdout, []string{"Client ID", "Remote Address", "User", "Protocol"}, table, func(int) bool { return false })
		return nil
	})
}
