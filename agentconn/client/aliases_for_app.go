package client

// Temporary: app's tests still spell these names through the client. The
// integrator rewrites client.FeatureX to wire.FeatureX in app (and its
// successor package) and then deletes this file.

import "github.com/chopin-desktop/chopin/agentconn/wire"

// Deprecated: use wire.FeatureResumableSessions.
const FeatureResumableSessions = wire.FeatureResumableSessions

// Deprecated: use wire.FeatureRestartNotice.
const FeatureRestartNotice = wire.FeatureRestartNotice
