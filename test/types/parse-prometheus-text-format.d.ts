/** Types of parse-prometheus-text-format (the package ships none). */
declare module 'parse-prometheus-text-format' {
  /** Metric families of a Prometheus text exposition, each with its samples (values as strings). */
  export default function parsePrometheusTextFormat(text: string): Array<{
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Array<{
      labels?: Record<string, string>;
      value?: string;
      buckets?: Record<string, string>;
      count?: string;
      sum?: string;
    }>;
  }>;
}
