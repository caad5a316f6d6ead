/** Area under the ROC curve: the chance a random positive outscores a random negative (ties half). */
export function auc(scores: readonly number[], positive: readonly boolean[]): number {
  const idx = scores.map((s, i) => [s, positive[i] === true] as const).sort((a, b) => a[0] - b[0]);
  let rankSum = 0;
  let pos = 0;
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j < idx.length && idx[j]?.[0] === idx[i]?.[0]) j++;
    const midRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++)
      if (idx[k]?.[1]) {
        rankSum += midRank;
        pos++;
      }
    i = j;
  }
  const neg = idx.length - pos;
  return pos === 0 || neg === 0 ? Number.NaN : (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}
