// A run's pending interrupt answered in the console (issue 18 item 2): an approval gate with Accept / Reject and an
// optional comment; a clarification with one field per question, resumed as `{answers: {<question id>: text}}`
// (the gate's resumeSchema); any other kind with one text value.
import { useRef } from 'preact/hooks';
import { runApi } from './api.js';
import { useConsole } from './context.js';
import type { PendingInterrupt } from './run-types.js';

/** The `{id, question}` entries of a clarification's data (what `core.clarificationGate` asks). */
function questionsOf(i: PendingInterrupt): Array<{ id: string; question: string }> {
  const qs = Array.isArray(i.data?.questions) ? (i.data.questions as unknown[]) : [];
  return qs.filter(
    (q): q is { id: string; question: string } =>
      typeof q === 'object' && q !== null && typeof (q as { id?: unknown }).id === 'string',
  );
}

export function InterruptForm({ runId, i }: { runId: string; i: PendingInterrupt }) {
  const { act } = useConsole();
  const text = useRef<HTMLInputElement>(null);
  const form = useRef<HTMLFormElement>(null);
  const id = `interrupt-${i.interruptId}`;
  const answer = (label: string, body: Record<string, unknown>) =>
    act(`${label} ${i.nodeId}`, () => runApi('POST', `/runs/${runId}/interrupts/${i.nodeId}`, body));
  const questions = i.kind === 'clarification' ? questionsOf(i) : [];
  const heading = i.kind === 'approval' ? 'Approval' : questions.length ? 'Questions' : 'Question';
  if (questions.length) {
    const send = () => {
      const answers: Record<string, string> = {};
      for (const q of questions) {
        const el = form.current?.elements.namedItem(`q-${q.id}`) as HTMLInputElement | null;
        answers[q.id] = el?.value ?? '';
      }
      void answer('Answer', { resumeValue: { answers } });
    };
    return (
      <article class="interrupt" data-node-id={i.nodeId} data-kind={i.kind} aria-labelledby={`${id}-h`}>
        <h4 id={`${id}-h`}>
          {heading} at node {i.nodeId}
          {i.data?.title ? `: ${i.data.title}` : ''}
        </h4>
        <form
          ref={form}
          aria-labelledby={`${id}-h`}
          onSubmit={(e) => {
            e.preventDefault();
            send();
          }}
        >
          {questions.map((q) => (
            <p key={q.id} data-question-id={q.id}>
              <label for={`${id}-${q.id}`}>{q.question}</label>{' '}
              <input id={`${id}-${q.id}`} name={`q-${q.id}`} type="text" maxLength={2000} required />
            </p>
          ))}
          <p>
            <button type="submit">Send answers</button>
          </p>
        </form>
      </article>
    );
  }
  const actions = i.kind === 'approval' ? (i.data?.actions ?? ['accept', 'reject']) : [];
  return (
    <article class="interrupt" data-node-id={i.nodeId} data-kind={i.kind} aria-labelledby={`${id}-h`}>
      <h4 id={`${id}-h`}>
        {heading} at node {i.nodeId}: {i.data?.title ?? ''}
      </h4>
      {i.data?.description ? <p>{i.data.description}</p> : null}
      <p>
        <label for={id}>{i.kind === 'approval' ? 'Comment (optional) ' : 'Answer '}</label>
        <input id={id} ref={text} type="text" maxLength={2000} />
      </p>
      <p>
        {i.kind === 'approval' ? (
          actions
            .filter((a) => a === 'accept' || a === 'reject')
            .map((a) => (
              <button
                key={a}
                type="button"
                class={a === 'accept' ? 'approve' : 'deny'}
                onClick={() => {
                  const comment = text.current?.value ?? '';
                  void answer(a === 'accept' ? 'Accept' : 'Reject', { action: a, ...(comment ? { comment } : {}) });
                }}
              >
                {a === 'accept' ? 'Accept' : 'Reject'}
              </button>
            ))
        ) : (
          <button type="button" onClick={() => void answer('Answer', { resumeValue: text.current?.value ?? '' })}>
            Send answer
          </button>
        )}
      </p>
    </article>
  );
}
