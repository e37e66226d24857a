package agentconn

// Temporary aliases of the names app uses that moved to agentconn/wire, so
// app compiles while it is being split. The integrator rewrites each
// agentconn.X below to wire.X in app (and the Planner bridge's package) and
// then deletes this file.

import "github.com/chopin-desktop/chopin/agentconn/wire"

type (
	Answer              = wire.Answer
	Attach              = wire.Attach
	Attached            = wire.Attached
	Attachment          = wire.Attachment
	Catalog             = wire.Catalog
	CatalogCommand      = wire.CatalogCommand
	CatalogModel        = wire.CatalogModel
	ControlResult       = wire.ControlResult
	Detach              = wire.Detach
	ForkFrom            = wire.ForkFrom
	Input               = wire.Input
	InputReceived       = wire.InputReceived
	InputRequest        = wire.InputRequest
	InputResult         = wire.InputResult
	Message             = wire.Message
	ModelDefault        = wire.ModelDefault
	Option              = wire.Option
	ProtocolError       = wire.ProtocolError
	QuestionAnswer      = wire.QuestionAnswer
	QuestionItem        = wire.QuestionItem
	QuestionnaireParams = wire.QuestionnaireParams
	Refused             = wire.Refused
	Restarting          = wire.Restarting
	ResumeSessions      = wire.ResumeSessions
	Resumed             = wire.Resumed
	ResumedSession      = wire.ResumedSession
	RunCard             = wire.RunCard
	Runs                = wire.Runs
	Stage               = wire.Stage
	Start               = wire.Start
	Started             = wire.Started
	Stop                = wire.Stop
	StreamPart          = wire.StreamPart
	Tool                = wire.Tool
	ToolError           = wire.ToolError
	Turn                = wire.Turn
	TurnEnd             = wire.TurnEnd
)

const (
	FeatureAttachments  = wire.FeatureAttachments
	FeatureSteerTurn    = wire.FeatureSteerTurn
	FeaturesHeader      = wire.FeaturesHeader
	MethodConfirm       = wire.MethodConfirm
	MethodQuestionnaire = wire.MethodQuestionnaire
	ModePlanner         = wire.ModePlanner
	MsgBusy             = wire.MsgBusy
	PartReasoningDelta  = wire.PartReasoningDelta
	PartReasoningStart  = wire.PartReasoningStart
	PartTextDelta       = wire.PartTextDelta
	PartTextStart       = wire.PartTextStart
	PartToolCall        = wire.PartToolCall
	PartToolResult      = wire.PartToolResult
	Subprotocol         = wire.Subprotocol
)

var (
	DecodeServerFrame = wire.DecodeServerFrame
	Encode            = wire.Encode
)
