// Package client is a Go client of the chopin.agent.v1 agent connection: what
// an agent needs to act as a document's Planner, and what the agentconn
// contract tests drive the server with. It uses nothing but the protocol's
// wire package (agentconn/wire), JSON and a WebSocket: the import-graph test
// refuses any other package of this module, the server included.
//
// A Planner is a Handler: Turn runs one turn, streaming parts and calling
// host tools; Start, Stop and Resume answer the server's requests and default
// to yes. Dial connects and attaches; the link then runs until Detach, a
// refusal or a close, after which everything still waiting on it (host tool
// calls, questions) is settled at once.
//
// A complete minimal Planner, which answers every turn by reading the plan
// and saying how long it is:
//
//	package main
//
//	import (
//		"context"
//		"fmt"
//		"log"
//		"os"
//
//		"github.com/chopin-desktop/chopin/agentconn/client"
//	)
//
//	func main() {
//		ctx := context.Background()
//		link, err := client.Dial(ctx, client.Config{
//			URL:      os.Getenv("CHOPIN_URL") + "/api/v1/agent",
//			Token:    os.Getenv("CHOPIN_TOKEN"),
//			Document: os.Getenv("CHOPIN_DOCUMENT"),
//			Handler: client.Handler{
//				Turn: func(ctx context.Context, t *client.Turn) error {
//					plan, err := t.CallTool(ctx, "read_plan", map[string]any{})
//					if err != nil {
//						return err // the turn ends failed, with this message
//					}
//					return t.Text(fmt.Sprintf("You wrote %q. The plan is %d bytes.", t.Prompt(), len(plan)))
//				},
//			},
//		})
//		if err != nil {
//			log.Fatal(err) // *client.HTTPError or *client.Refusal say why
//		}
//		log.Printf("attached to %s", link.Attached().Document.Title)
//		<-link.Done()
//		log.Print(link.Err())
//	}
//
// With resumable-sessions granted, a link that drops without a detach keeps
// its sessions that wait on questions or report live runs: pass
// Link.Resumption as the next Dial's Config.Resume to get them back, and
// wait RetryDelay between attempts (at once after a restart, then every
// 250 ms inside the window restarting announced). See resume.go.
package client
