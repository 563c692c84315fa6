// Shapes of the OpenWOP run API's answers as the runs panel reads them (GET /v1/runs, /v1/runs/{id}, events).

export interface RunSummary {
  runId: string;
  workflowId: string;
  status: string;
  createdAt: string;
  startedAt?: string | null;
  completedAt?: string | null;
}

export interface PendingInterrupt {
  nodeId: string;
  interruptId: string;
  kind: string;
  data: { title?: string; description?: string; actions?: string[]; [k: string]: unknown } | null;
}

export interface RunSnapshot {
  runId: string;
  workflowId: string;
  status: string;
  currentNodeId?: string;
  startedAt?: string;
  completedAt?: string;
  nodeStates: Record<string, { status?: string; typeId?: string; executions?: number; error?: unknown }>;
  error?: { code: string; message: string };
  lastSequence: number;
  pendingInterrupts: PendingInterrupt[];
}

export interface RunEvent {
  eventId: string;
  sequence: number;
  type: string;
  nodeId?: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

export interface WorkflowSummary {
  id: string;
  name?: string;
  version?: string;
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
