// Reads an HdrHistogram interval log with HdrHistogram's own Java reader
// (org.hdrhistogram:HdrHistogram from Maven Central) and prints, per
// interval, its start (s), total count and p99 (ns): what the test compares
// with stampede.load/1. Run as a single-file program: java -cp JAR ReadLog.java LOG
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

public class ReadLog {
    public static void main(String[] args) throws Exception {
        HistogramLogReader reader = new HistogramLogReader(args[0]);
        EncodableHistogram h;
        while ((h = reader.nextIntervalHistogram()) != null) {
            Histogram hist = (Histogram) h;
            System.out.println(Math.round(hist.getStartTimeStamp() / 1000.0 - reader.getStartTimeSec()) + " "
                + hist.getTotalCount() + " " + hist.getValueAtPercentile(99.0));
        }
    }
}
