// Time series with uPlot (about 50 kB, canvas): one chart component for the dashboard. Counts are bars (a
// bucket is a count, not a point on a line), every y axis starts at 0, and buckets without data are zeros
// (`zeroFilled`), so a quiet hour reads as quiet instead of as a line drawn across it.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useTheme } from './theme.tsx';

const COLORS = {
  light: ['#1d4ed8', '#b91c1c', '#047857', '#7c3aed', '#b45309', '#0e7490'],
  dark: ['#93c5fd', '#fca5a5', '#6ee7b7', '#c4b5fd', '#fcd34d', '#67e8f9'],
};

/** A colour of the page's palette (styles.css), for the canvas, which CSS does not reach. */
const cssColor = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

export interface Series {
  label: string;
  /** One value per time; null where nothing was measured (a line's gap). */
  values: (number | null)[];
}

/**
 * Every bucket start of [from, to) in steps of `bucket`, with the rows' values where a row starts there and 0
 * elsewhere (the stats API answers only the buckets that hold records).
 */
export function zeroFilled<T extends { start: number }>(
  rows: T[],
  range: { from: number; to: number; bucket: number },
  pick: (row: T) => number,
): { times: number[]; values: number[] } {
  const byStart = new Map<number, number>();
  for (const row of rows) byStart.set(row.start, (byStart.get(row.start) ?? 0) + pick(row));
  const times: number[] = [];
  const values: number[] = [];
  for (let start = range.from; start < range.to; start += range.bucket) {
    times.push(start);
    values.push(byStart.get(start) ?? 0);
  }
  return { times, values };
}

const bars = uPlot.paths.bars!({ size: [0.8, 60], align: 1 });

export function TimeChart(props: {
  title: string;
  unit: string;
  times: number[];
  /** The x axis's span (epoch ms), whatever the data covers. */
  from: number;
  to: number;
  series: Series[];
  /** Counts: bars, each series stacked on the ones before it. Otherwise lines (latencies, rates). */
  kind?: 'bars' | 'lines';
}) {
  const box = useRef<HTMLDivElement>(null);
  const kind = props.kind ?? 'lines';
  const theme = useTheme();
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = Math.max(280, element.clientWidth);
    // Stacked bars: each series drawn as the sum up to it, the tallest first so the smaller ones sit on top.
    const sums = props.series.map((_, index) =>
      props.times.map((__, at) =>
        props.series.slice(0, index + 1).reduce((sum, series) => sum + (series.values[at] ?? 0), 0),
      ),
    );
    const order =
      kind === 'bars' ? props.series.map((_, index) => index).reverse() : props.series.map((_, i) => i);
    const format = (value: number) => `${value.toLocaleString()} ${props.unit}`;
    const plot = new uPlot(
      {
        width,
        height: 220,
        series: [
          {},
          ...order.map((index) => {
            const series = props.series[index]!;
            const palette = COLORS[theme];
            const color = palette[index % palette.length]!;
            return {
              label: series.label,
              stroke: color,
              width: kind === 'bars' ? 1 : 2,
              ...(kind === 'bars'
                ? { fill: `${color}cc`, paths: bars, points: { show: false } }
                : // Every measured point drawn: a lone bucket between gaps is a dot, not nothing.
                  { points: { show: true, size: 6, fill: color } }),
              // The legend shows the series' own value, not the stacked sum it is drawn at.
              value: (_: uPlot, __: number | null, ___: number, at: number | null) => {
                const value = at == null ? null : series.values[at];
                return value == null ? '—' : format(value);
              },
            };
          }),
        ],
        axes: [
          {
            stroke: cssColor('--fg'),
            grid: { stroke: cssColor('--line') },
            ticks: { stroke: cssColor('--line') },
          },
          {
            stroke: cssColor('--fg'),
            grid: { stroke: cssColor('--line') },
            ticks: { stroke: cssColor('--line') },
            label: props.unit,
            size: 70,
            values: (_: uPlot, splits: number[]) =>
              splits.map((value) => value.toLocaleString(undefined, { maximumSignificantDigits: 3 })),
          },
        ],
        scales: {
          x: { time: true, range: [props.from / 1000, props.to / 1000] },
          // From 0, whatever the data: a flat series at 5 is not a chart of a drop to 5.
          y: { range: (_: uPlot, __: number, max: number) => [0, max > 0 ? max * 1.1 : 1] },
        },
      },
      [
        props.times.map((time) => time / 1000),
        ...order.map((index) => (kind === 'bars' ? sums[index]! : props.series[index]!.values)),
      ],
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, element.clientWidth), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.times, props.series, props.unit, props.from, props.to, kind, theme]);
  return (
    <figure className="chart" data-kind={kind}>
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title}, ${props.series.length} series over time`} />
    </figure>
  );
}
