// WorkspaceCtx is what every pane of a document's workspace is handed (as
// its ctx prop) by Workspace in workspace.tsx. It lives here, apart from the
// components, so that the panes can name it without importing workspace.tsx,
// which imports them: this module imports none of them.

import type { Session } from "../api";
import type { RoomSocket } from "../room";
import type { PlanSync } from "../plansync";
import type { RoomState } from "./reduce";

export interface WorkspaceCtx {
  socket: RoomSocket;
  plan: PlanSync;
  state: RoomState;
  session: Session;
  showInPlan: (id: string) => void;
  connect: () => void; // opens the Connect dialog
  showDecision: (id: string) => void; // its card in Decisions
  update: (f: (s: RoomState) => RoomState) => void; // a change the tab made itself (older Chat pages)
}
