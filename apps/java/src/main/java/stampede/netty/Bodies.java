// The JSON bodies of the contract's endpoints, serialised per request with
// Jackson, the JSON library a Java service most often uses. One shared
// ObjectMapper (thread-safe once configured); records name the fields.
package stampede.netty;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;

final class Bodies {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Body of /json. */
    record Message(String message) {}

    /** Body of /cpu and /lock: the 64-bit result as a string, since it may exceed 2^63. */
    record CpuResult(String result) {}

    /** Body of /alloc. */
    record Allocated(@JsonProperty("allocated_kib") int allocatedKib) {}

    /** Body of /sleep. */
    record Slept(@JsonProperty("slept_ms") int sleptMs) {}

    private Bodies() {}

    /** Serialises {@code value} (a record, a boxed number or a primitive array) to UTF-8 JSON. */
    static byte[] json(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
