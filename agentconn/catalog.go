package agentconn

import "github.com/chopin-desktop/chopin/agentconn/wire"

// CatalogHost is a Host that wants to know when the document's catalog
// changes (capability-catalog): a report arrived. The link closing is told
// through PlannerChanged, after which Catalog returns nil. A Host that does
// not implement it can still read Catalog.
type CatalogHost interface {
	CatalogChanged(documentID string, catalog *wire.Catalog)
}

// capabilities keeps the link's new catalog, replacing the last one whole.
func (l *link) capabilities(m wire.Capabilities) {
	if !l.has(wire.FeatureCapabilityCatalog) {
		l.protocolError(wire.CodeProtocol, wire.MsgUnoffered(m.MessageType()))
		return
	}
	cat, err := wire.ParseCatalog(m.Catalog) // validate checked it already
	if err != nil {
		l.protocolError(wire.CodeMalformed, wire.MsgMalformed(err.Error()))
		return
	}
	for _, s := range cat.Skipped {
		l.log.Warn("capabilities: skipped an entry nobody could choose", "entry", s)
	}
	l.mu.Lock()
	if l.state != stateAttached {
		l.mu.Unlock()
		return
	}
	l.catalog = &cat
	doc := l.doc.ID
	l.mu.Unlock()
	if h, ok := l.srv.host.(CatalogHost); ok {
		h.CatalogChanged(doc, &cat)
	}
}

// Catalog returns the catalog the document's attached Planner last
// reported, or nil: none attached, no capability-catalog, or no report yet.
func (s *Server) Catalog(documentID string) *wire.Catalog {
	l := s.attached(documentID)
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != stateAttached {
		return nil
	}
	return l.catalog
}

// Granted reports whether the document's attached Planner was granted feature.
func (s *Server) Granted(documentID, feature string) bool {
	l := s.attached(documentID)
	return l != nil && l.has(feature)
}

// featureTurn leaves out of a turn the fields of features the link was not
// granted, so a client that did not ask sees the turn it always saw.
func (l *link) featureTurn(t wire.Turn) wire.Turn {
	if !l.has(wire.FeatureCapabilityCatalog) {
		t.ThinkingLevel = ""
	}
	if !l.has(wire.FeatureAttachments) {
		t.Attachments = nil
	}
	if !l.has(wire.FeatureRetryTurn) {
		t.ChatMessage, t.Retry = "", false
	}
	return t
}
