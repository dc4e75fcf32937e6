package dev.drainkit.springconsumer;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cache.Cache;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * SpringConsumer is the Spring Cloud consumer that {@code drainkit drill
 * --consumer spring} drives: it learns the instances of the service
 * {@code drainkit.service} from Nacos (spring-cloud-starter-alibaba-nacos-discovery)
 * and picks one per request through Spring Cloud LoadBalancer, with its
 * default CachingServiceInstanceListSupplier (35 s unless
 * spring.cloud.loadbalancer.cache.ttl says otherwise; off with
 * spring.cloud.loadbalancer.cache.enabled=false), as the Spring Cloud
 * services of issue 32 do.
 *
 * <p>The drill reaches it on 127.0.0.1:{@code server.port}:
 * <ul>
 * <li>{@code /call/PATH}: one request to PATH on the instance the balancer
 * picked; the answer carries the provider's status and body, and the
 * header {@code Drainkit-Provider} with the host:port it went to. When no
 * answer came: 502 with {@code Drainkit-Spring-Error} saying why
 * (refused, reset, eof, timeout, other: message); without an instance, 503
 * with {@code Drainkit-Spring-Error: no-instance}.
 * <li>{@code /listed}: the host:ports the next request can go to (the
 * balancer's cached list, or Nacos's while nothing is cached), one per line,
 * without refreshing the cache.
 * <li>{@code /prepare?want=N&calls=K}: once Nacos lists at least N
 * instances, K requests through the balancer (the JIT's warm-up and the
 * cache's first fill); answers 200 with the count, else 503.
 * </ul>
 *
 * <p>Each request to the provider names the caller in the drainkit consumer
 * header ({@code Drainkit-Consumer}): "spring-PID", followed by "/" and
 * the drill's consumer name when the drill sent one, so that the provider's
 * propagation window tells the consumers apart.
 */
@SpringBootApplication
@RestController
public class SpringConsumer {
	static final String CONSUMER_HEADER = "Drainkit-Consumer";
	static final String PROVIDER_HEADER = "Drainkit-Provider";
	static final String ERROR_HEADER = "Drainkit-Spring-Error";

	private final LoadBalancerClient balancer;
	private final DiscoveryClient discovery;
	private final ObjectProvider<LoadBalancerCacheManager> caches;
	private final String service;
	private final String identity = "spring-" + ProcessHandle.current().pid();
	// HTTP/1.1 on purpose: the default would try an h2c upgrade on every
	// new connection, which no drilled provider speaks.
	private final HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(1))
			.build();
	private final Duration timeout;

	public SpringConsumer(LoadBalancerClient balancer, DiscoveryClient discovery,
			ObjectProvider<LoadBalancerCacheManager> caches,
			@Value("${drainkit.service}") String service,
			@Value("${drainkit.request-timeout:2s}") Duration timeout) {
		this.balancer = balancer;
		this.discovery = discovery;
		this.caches = caches;
		this.service = service;
		this.timeout = timeout;
	}

	public static void main(String[] args) {
		SpringApplication.run(SpringConsumer.class, args);
	}

	/** call forwards the request to the instance the balancer picks. */
	@RequestMapping("/call/**")
	public ResponseEntity<byte[]> call(HttpServletRequest req) throws IOException {
		String target = req.getRequestURI().substring("/call".length());
		if (req.getQueryString() != null) {
			target += "?" + req.getQueryString();
		}
		byte[] body = req.getInputStream().readAllBytes();
		String consumer = req.getHeader(CONSUMER_HEADER);
		String name = consumer == null || consumer.isEmpty() ? identity : identity + "/" + consumer;
		return forward(req.getMethod(), target, body, name);
	}

	private ResponseEntity<byte[]> forward(String method, String target, byte[] body, String name) throws IOException {
		try {
			return balancer.execute(service, instance -> send(instance, method, target, body, name));
		} catch (IllegalStateException e) {
			// BlockingLoadBalancerClient's "No instances available for ..."
			return ResponseEntity.status(503).header(ERROR_HEADER, "no-instance: " + oneLine(e.getMessage())).build();
		}
	}

	private ResponseEntity<byte[]> send(ServiceInstance instance, String method, String target, byte[] body, String name) {
		String addr = instance.getHost() + ":" + instance.getPort();
		HttpRequest.BodyPublisher pub = body.length == 0 ? HttpRequest.BodyPublishers.noBody()
				: HttpRequest.BodyPublishers.ofByteArray(body);
		HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + addr + target))
				.timeout(timeout)
				.header(CONSUMER_HEADER, name)
				.method(method, pub)
				.build();
		try {
			HttpResponse<byte[]> resp = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
			return ResponseEntity.status(resp.statusCode()).header(PROVIDER_HEADER, addr).body(resp.body());
		} catch (IOException e) {
			return ResponseEntity.status(502).header(PROVIDER_HEADER, addr).header(ERROR_HEADER, kind(e)).build();
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			return ResponseEntity.status(502).header(PROVIDER_HEADER, addr).header(ERROR_HEADER, "other: interrupted").build();
		}
	}

	/** kind names how a request got no answer, for the drill's failure kinds. */
	static String kind(IOException e) {
		String msg = oneLine(String.valueOf(e.getMessage()));
		String low = msg.toLowerCase(Locale.ROOT);
		if (e instanceof HttpConnectTimeoutException || e instanceof HttpTimeoutException) {
			return "timeout: " + msg;
		}
		if (e instanceof ConnectException) {
			return "refused: " + msg;
		}
		if (low.contains("reset") || low.contains("broken pipe")) {
			return "reset: " + msg;
		}
		if (e instanceof EOFException || low.contains("received no bytes") || low.contains("closed")) {
			return "eof: " + msg;
		}
		return "other: " + e.getClass().getSimpleName() + ": " + msg;
	}

	private static String oneLine(String s) {
		return s == null ? "" : s.replaceAll("[\\r\\n]+", " ");
	}

	/**
	 * listed returns the instances the next request can go to: the
	 * balancer's cached list while it holds one, else Nacos's current list
	 * (what the next request would fetch), without filling the cache.
	 */
	@RequestMapping("/listed")
	public String listed() {
		List<ServiceInstance> list = cached();
		if (list == null) {
			list = discovery.getInstances(service);
		}
		StringBuilder b = new StringBuilder();
		for (ServiceInstance i : list) {
			b.append(i.getHost()).append(':').append(i.getPort()).append('\n');
		}
		return b.toString();
	}

	@SuppressWarnings("unchecked")
	private List<ServiceInstance> cached() {
		LoadBalancerCacheManager m = caches.getIfAvailable();
		if (m == null) {
			return null; // cache off
		}
		Cache c = m.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME);
		if (c == null) {
			return null;
		}
		List<ServiceInstance> list = c.get(service, List.class);
		return list == null || list.isEmpty() ? null : new ArrayList<>(list);
	}

	/**
	 * prepare warms the consumer up before the drill's load: once Nacos
	 * lists at least want instances, calls requests to path through the
	 * balancer (named identity + "/prepare"), so that the JIT and the
	 * connections are warm and the cache holds the list when the load
	 * begins.
	 */
	@RequestMapping("/prepare")
	public ResponseEntity<String> prepare(@RequestParam int want, @RequestParam(defaultValue = "200") int calls,
			@RequestParam(defaultValue = "/") String path) throws IOException {
		int n = discovery.getInstances(service).size();
		if (n < want) {
			return ResponseEntity.status(503).body("nacos lists " + n + " of " + want + " instances\n");
		}
		int ok = 0;
		for (int i = 0; i < calls; i++) {
			ResponseEntity<byte[]> r = forward("GET", path, new byte[0], identity + "/prepare");
			if (r.getStatusCode().value() < 500) {
				ok++;
			}
		}
		List<ServiceInstance> cached = cached();
		return ResponseEntity.ok("listed " + n + " answered " + ok + " of " + calls + " cached "
				+ (cached == null ? "none" : String.valueOf(cached.size())) + "\n");
	}
}
