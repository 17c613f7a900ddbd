/** @module Reading one series of a gateway's Prometheus exposition (`GET /metrics`) in tests. */

/** The value of one sample (`name{labels}` exactly as exposed), or undefined when the series is absent. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes the gateway at `base` and reads one sample. */
export async function metric(gw: { base: string }, series: string): Promise<number | undefined> {
  return sample(await (await fetch(`${gw.base}/metrics`)).text(), series);
}
