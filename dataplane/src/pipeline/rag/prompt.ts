/** The system message a RAG answer is written from: numbered passages it cites as `[n]`. Pure. */

export interface Source {
  filename: string;
  text: string;
}

/** The instruction and the numbered sources the model answers from. */
export function contextMessage(sources: readonly Source[]): string {
  if (sources.length === 0)
    return 'No passages of the knowledge base matched the question. Say that you do not know rather than guessing.';
  const listed = sources.map((s, i) => `[${i + 1}] (${s.filename})\n${s.text}`).join('\n\n');
  return (
    'Answer the question using only the numbered passages below. Cite the passages you use as [n]. ' +
    'If they do not contain the answer, say that you do not know.\n\n' +
    listed
  );
}
