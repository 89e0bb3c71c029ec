package wharf.conformance;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/** Payload is the serializable class the ObjectMessage case sends. */
public final class Payload implements Serializable {
    private static final long serialVersionUID = 1L;

    final String name;
    final long number;
    final List<String> items;

    Payload(String name, long number, List<String> items) {
        this.name = name;
        this.number = number;
        this.items = items;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Payload)) {
            return false;
        }
        Payload p = (Payload) o;
        return name.equals(p.name) && number == p.number && items.equals(p.items);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, number, items);
    }

    @Override
    public String toString() {
        return "Payload{" + name + "," + number + "," + items + "}";
    }
}
