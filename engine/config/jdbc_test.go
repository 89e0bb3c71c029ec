package config

import (
	"strings"
	"testing"
	"time"
)

// jdbcDoc is seed 000's snippet: a PGSimpleDataSource bean and the
// adapter naming it; %s is replaced by the adapter's attributes, %b by
// more beans.
const jdbcDoc = `<beans xmlns="http://www.springframework.org/schema/beans">
  <bean id="postgres" class="org.postgresql.ds.PGSimpleDataSource">
    <property name="url" value="jdbc:postgresql://db:5432/activemq"/>
    <property name="user" value="activemq"/>
    <property name="password" value="${db.password}"/>
  </bean>
  %b
  <broker xmlns="http://activemq.apache.org/schema/core" dataDirectory="/var/wharf">
    <persistenceAdapter>
      <jdbcPersistenceAdapter %s/>
    </persistenceAdapter>
  </broker>
</beans>`

func jdbcXML(attrs, beans string) string {
	return strings.Replace(strings.Replace(jdbcDoc, "%s", attrs, 1), "%b", beans, 1)
}

func TestConfigJDBC(t *testing.T) {
	vars := map[string]string{"db.password": "s3cret"}
	c, err := ParseXML(strings.NewReader(jdbcXML(`dataSource="#postgres" createTablesOnStartup="true"`, "")), "activemq.xml", vars)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultJDBC()
	want.DataSource, want.DataSourceClass = "postgres", pgSimpleDataSource
	want.Host, want.Port, want.Database, want.User, want.Password = "db", 5432, "activemq", "activemq", "s3cret"
	want.Line = c.Persistence.JDBC.Line
	if c.Persistence.Kind != KindJDBC || c.Persistence.JDBC != want || want.Line == 0 {
		t.Fatalf("seed 000: got kind %q %+v, want %q %+v", c.Persistence.Kind, c.Persistence.JDBC, KindJDBC, want)
	}
	if got := c.Persistence.JDBC.URL(); got != "postgres://activemq:s3cret@db:5432/activemq" {
		t.Errorf("URL: got %s", got)
	}

	// Every attribute, and a dbcp2 BasicDataSource.
	dbcp := `<bean id="pool" class="org.apache.commons.dbcp2.BasicDataSource" destroy-method="close">
    <property name="driverClassName" value="org.postgresql.Driver"/>
    <property name="url" value="jdbc:postgresql://pg.example:6543/mq?sslmode=require"/>
    <property name="username" value="broker"/>
    <property name="password" value="pw"/>
    <property name="maxTotal" value="12"/>
    <property name="initialSize" value="3"/>
    <property name="poolPreparedStatements" value="true"/>
  </bean>`
	c, err = ParseXML(strings.NewReader(jdbcXML(`dataSource="#pool" createTablesOnStartup="false" tablePrefix="WH_" useLock="false" lockKeepAlivePeriod="5000" cleanupPeriod="60000" transactionIsolation="4"`, dbcp)), "activemq.xml", vars)
	if err != nil {
		t.Fatal(err)
	}
	want = JDBC{DataSource: "pool", DataSourceClass: dbcp2DataSource, Host: "pg.example", Port: 6543, Database: "mq", User: "broker", Password: "pw",
		SSLMode: "require", MaxConnections: 12, MinConnections: 3, CreateTablesOnStartup: false, TablePrefix: "WH_", UseLock: false,
		Locker: LockerDatabase, LockAcquireSleepInterval: 10 * time.Second,
		LockKeepAlivePeriod: 5 * time.Second, CleanupPeriod: time.Minute, TransactionIsolation: 4, Line: c.Persistence.JDBC.Line}
	if c.Persistence.JDBC != want {
		t.Fatalf("dbcp2: got %+v, want %+v", c.Persistence.JDBC, want)
	}

	// The lease locker.
	c, err = ParseXML(strings.NewReader(strings.Replace(jdbcXML(`dataSource="#postgres" lockKeepAlivePeriod="2000"`, ""), "/>\n    </persistenceAdapter>",
		`><locker><lease-database-locker lockAcquireSleepInterval="5000" leaseHolderId="wharf-1" maxAllowableDiffFromDBTime="1000"/></locker></jdbcPersistenceAdapter>`+"\n    </persistenceAdapter>", 1)), "activemq.xml", vars)
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Persistence.JDBC; j.Locker != LockerLease || j.LockAcquireSleepInterval != 5*time.Second || j.LeaseHolderID != "wharf-1" ||
		j.MaxAllowableDiffFromDBTime != time.Second || j.LockKeepAlivePeriod != 2*time.Second || !j.UseLock {
		t.Fatalf("lease locker: got %+v", j)
	}
	c, err = ParseYAML(strings.NewReader("persistence:\n  jdbc:\n    url: jdbc:postgresql://h/d\n    locker:\n      type: lease\n      lease_holder_id: w2\n      lock_acquire_sleep_interval: 3s\n"), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Persistence.JDBC; j.Locker != LockerLease || j.LeaseHolderID != "w2" || j.LockAcquireSleepInterval != 3*time.Second {
		t.Fatalf("YAML lease locker: got %+v", j)
	}

	// serverName, portNumber, databaseName instead of url.
	pg := `<bean id="pg2" class="org.postgresql.ds.PGSimpleDataSource"><property name="serverName" value="h"/><property name="portNumber" value="7000"/>` +
		`<property name="databaseName" value="d"/><property name="user" value="u"/></bean>`
	c, err = ParseXML(strings.NewReader(jdbcXML(`dataSource="#pg2"`, pg)), "activemq.xml", vars)
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Persistence.JDBC; j.Host != "h" || j.Port != 7000 || j.Database != "d" || j.User != "u" {
		t.Fatalf("serverName form: got %+v", j)
	}

	yml := "persistence:\n  jdbc:\n    url: jdbc:postgresql://pg.example:6543/mq?sslmode=require\n    user: broker\n    password: pw\n" +
		"    max_connections: 12\n    min_connections: 3\n    create_tables_on_startup: false\n    table_prefix: WH_\n    use_lock: false\n" +
		"    lock_keep_alive_period: 5s\n    cleanup_period: 1m\n    transaction_isolation: repeatable_read\n"
	c, err = ParseYAML(strings.NewReader(yml), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want.DataSource, want.DataSourceClass, want.Line = "", "", 0
	if c.Persistence.Kind != KindJDBC || c.Persistence.JDBC != want {
		t.Fatalf("YAML: got kind %q %+v, want %+v", c.Persistence.Kind, c.Persistence.JDBC, want)
	}

	cases := []struct {
		name, attrs, beans, want string
	}{
		{"no data source", ``, "", `dataSource="#id" is required`},
		{"unknown bean", `dataSource="#nope"`, "", `no <bean id="nope"`},
		{"not a reference", `dataSource="postgres"`, "", `write dataSource="#id"`},
		{"mysql url", `dataSource="#m"`, `<bean id="m" class="org.postgresql.ds.PGSimpleDataSource"><property name="url" value="jdbc:mysql://h/d"/></bean>`, "PostgreSQL only"},
		{"other driver", `dataSource="#m"`, `<bean id="m" class="org.apache.commons.dbcp2.BasicDataSource"><property name="driverClassName" value="com.mysql.Driver"/><property name="url" value="jdbc:postgresql://h/d"/></bean>`, "not org.postgresql.Driver"},
		{"unknown property", `dataSource="#m"`, `<bean id="m" class="org.postgresql.ds.PGSimpleDataSource"><property name="url" value="jdbc:postgresql://h/d"/><property name="turbo" value="1"/></bean>`, `<property name="turbo"> is not supported`},
		{"no database", `dataSource="#m"`, `<bean id="m" class="org.postgresql.ds.PGSimpleDataSource"><property name="serverName" value="h"/></bean>`, "no database name"},
		{"bad isolation", `dataSource="#postgres" transactionIsolation="3"`, "", "not a transaction isolation level"},
		{"bad prefix", `dataSource="#postgres" tablePrefix="X; DROP"`, "", "may hold only letters"},
		{"unknown attribute", `dataSource="#postgres" turbo="1"`, "", "turbo"},
		{"bad sleep interval", `dataSource="#postgres" lockAcquireSleepInterval="0"`, "", "must be positive"},
		{"bad port", `dataSource="#m"`, `<bean id="m" class="org.postgresql.ds.PGSimpleDataSource"><property name="url" value="jdbc:postgresql://h:99999/d"/></bean>`, "not in 1..65535"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseXML(strings.NewReader(jdbcXML(tc.attrs, tc.beans)), "activemq.xml", vars)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one naming %q", err, tc.want)
			}
		})
	}
}
