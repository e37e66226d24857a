package wire

import (
	"slices"
	"strings"
)

// The optional features of chopin.agent.v1 ("Features"), each named once.
// A client asks for features in the Chopin-Agent-Features header and uses
// one only when attached.features grants it; a server grants only those it
// lists here.
//
// Adding a feature touches, in this order:
//
//  1. a Feature constant below and its place in Features (attached.features
//     lists granted features in that order);
//  2. its messages and fields: the structs in this package, a golden test of
//     each wire form, and each new message type in messageTypes (registry.go);
//  3. the server (agentconn): what it sends only when the link has the
//     feature (link.has; Server.Granted for the host), and how it handles
//     the feature's client messages (link.handle);
//  4. the client (agentconn/client): Link.Has, and the Handler or method
//     that uses it;
//  5. the bundled client (planner), when it implements the feature: its
//     implemented list;
//  6. the host (the Planner bridge), when the feature changes what a turn
//     or a question carries;
//  7. a contract test in agentconn that drives the server through the
//     client, and docs/http-api.md or docs/room-protocol.md when people or
//     browsers see the difference.

// FeaturesHeader names the optional features a client wants.
const FeaturesHeader = "Chopin-Agent-Features"

// Feature names.
const (
	FeatureRunStageDeltas         = "run-stage-deltas"
	FeatureResumableSessions      = "resumable-sessions"
	FeatureRestartNotice          = "restart-notice"
	FeatureCapabilityCatalog      = "capability-catalog"
	FeatureSteerTurn              = "steer-turn"
	FeatureRetryTurn              = "retry-turn"
	FeatureAttachments            = "attachments"
	FeatureDecisionOptionPreviews = "decision-option-previews"
	FeatureSessionForks           = "session-forks"
)

// features is every feature, in the order attached.features lists them.
var features = [...]string{
	FeatureRunStageDeltas, FeatureResumableSessions, FeatureRestartNotice, FeatureCapabilityCatalog,
	FeatureSteerTurn, FeatureRetryTurn, FeatureAttachments, FeatureDecisionOptionPreviews, FeatureSessionForks,
}

// Features returns every feature this protocol package knows, in the order
// attached.features lists them. The server grants each of them.
func Features() []string { return slices.Clone(features[:]) }

// ParseFeaturesHeader reads Chopin-Agent-Features: whether it was sent, and
// the well-formed names in it. Names of another shape are ignored like
// unknown ones.
func ParseFeaturesHeader(values []string) (sent bool, names []string) {
	for _, v := range values {
		sent = true
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); isIdentifier(n) {
				names = append(names, n)
			}
		}
	}
	return sent, names
}

// GrantFeatures is what attached.features lists: nil without the header,
// else the requested names of Features, possibly none, at most 16.
func GrantFeatures(sent bool, requested []string) []string {
	if !sent {
		return nil
	}
	granted := []string{}
	for _, f := range features {
		for _, r := range requested {
			if r == f && len(granted) < maxFeatures {
				granted = append(granted, f)
				break
			}
		}
	}
	return granted
}
