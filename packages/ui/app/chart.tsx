// Time series with uPlot (about 50 kB, canvas): one chart component for the dashboard.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLORS = ['#1d4ed8', '#b91c1c', '#047857', '#7c3aed', '#b45309', '#0e7490'];

export function TimeChart(props: {
  title: string;
  unit: string;
  times: number[];
  /** The x axis's span (epoch ms), whatever the data covers. */
  from: number;
  to: number;
  series: { label: string; values: (number | null)[] }[];
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width,
        height: 220,
        series: [
          {},
          ...props.series.map((series, index) => ({
            label: series.label,
            stroke: COLORS[index % COLORS.length],
            width: 2,
            value: (_: uPlot, value: number | null) =>
              value == null ? '—' : `${value.toLocaleString()} ${props.unit}`,
          })),
        ],
        axes: [
          {},
          {
            label: props.unit,
            size: 70,
            values: (_: uPlot, splits: number[]) =>
              splits.map((value) => value.toLocaleString(undefined, { maximumSignificantDigits: 3 })),
          },
        ],
        scales: { x: { time: true, range: [props.from / 1000, props.to / 1000] } },
      },
      [props.times.map((time) => time / 1000), ...props.series.map((series) => series.values)],
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
  }, [props.times, props.series, props.unit, props.from, props.to]);
  return (
    <figure className="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title}, ${props.series.length} series over time`} />
    </figure>
  );
}
