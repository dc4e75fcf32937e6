package dev.drainkit.nacosserver;

import com.alibaba.nacos.NacosServerBasicApplication;
import com.alibaba.nacos.NacosServerWebApplication;
import com.alibaba.nacos.core.listener.startup.NacosStartUp;
import com.alibaba.nacos.core.listener.startup.NacosStartUpManager;
import com.alibaba.nacos.sys.env.Constants;
import com.alibaba.nacos.sys.env.DeploymentType;
import com.alibaba.nacos.sys.env.EnvUtil;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts a Nacos server (naming and config, no console) the way upstream's
 * NacosBootstrap does for deployment type "server": the core context without
 * a web server, then the server's web context (HTTP open API and gRPC) as its
 * child. Settings come from system properties or --key=value arguments, e.g.
 * -Dnacos.standalone=true -Dserver.port=8848 -Dnacos.home=DIR.
 */
public final class NacosServer {

    private NacosServer() {
    }

    public static void main(String[] args) {
        // Nacos reads the standalone switch from system properties only (its
        // application.properties is read too late for the cluster lookup).
        if (System.getProperty(Constants.STANDALONE_MODE_PROPERTY_NAME) == null) {
            System.setProperty(Constants.STANDALONE_MODE_PROPERTY_NAME, "true");
        }
        System.setProperty(Constants.NACOS_DEPLOYMENT_TYPE, Constants.NACOS_DEPLOYMENT_TYPE_SERVER);
        EnvUtil.setDeploymentType(DeploymentType.SERVER);
        // Nacos's run listeners look up the phase being started: each context
        // is announced before it runs, as upstream's bootstrap does.
        NacosStartUpManager.start(NacosStartUp.CORE_START_UP_PHASE);
        ConfigurableApplicationContext core = new SpringApplicationBuilder(NacosServerBasicApplication.class)
                .web(WebApplicationType.NONE).run(args);
        NacosStartUpManager.start(NacosStartUp.WEB_START_UP_PHASE);
        new SpringApplicationBuilder(NacosServerWebApplication.class).parent(core).run(args);
    }
}
