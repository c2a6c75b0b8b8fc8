// The database side of /db, /queries, /fortunes and /updates (apps/CONTRACT.md):
// an NpgsqlDataSource, whose connection pool is sized by DATABASE_POOL_SIZE
// (default 8, the manifest's db_pool knob), to DATABASE_URL. Npgsql opens
// connections on first use, so the server starts and serves every other
// endpoint without a database; every failure becomes DatabaseUnavailable,
// which Endpoints answers with 503.
using System.Globalization;
using Npgsql;

namespace Stampede.AspNetCore;

/// <summary>Why a database endpoint could not answer.</summary>
internal sealed class DatabaseUnavailable : Exception
{
    public DatabaseUnavailable(string message, Exception? inner = null) : base(message, inner)
    {
    }
}

internal sealed class Database
{
    private const int DefaultPoolSize = 8;
    private const int WorldRows = 10_000;
    private const int ConnectTimeoutSeconds = 5;

    private const string SelectWorld = "SELECT id, randomnumber FROM world WHERE id = $1";
    private const string SelectFortunes = "SELECT id, message FROM fortune";
    // One statement for the whole batch: the ids and numbers travel as two arrays.
    private const string UpdateWorlds = "UPDATE world SET randomnumber = new.randomnumber"
        + " FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) WHERE world.id = new.id";

    private readonly NpgsqlDataSource? _source;

    private Database(NpgsqlDataSource? source) => _source = source;

    /// <summary>
    /// Reads DATABASE_URL (<c>postgres://user:password@host:port/database</c>) and
    /// DATABASE_POOL_SIZE; a malformed value throws ArgumentException naming it.
    /// </summary>
    public static Database FromEnvironment()
    {
        int poolSize = DefaultPoolSize;
        string? size = Environment.GetEnvironmentVariable("DATABASE_POOL_SIZE");
        if (!string.IsNullOrWhiteSpace(size)
            && (!int.TryParse(size.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out poolSize) || poolSize < 1))
        {
            throw new ArgumentException($"DATABASE_POOL_SIZE={size} is not a positive integer; fix or unset it (8)");
        }
        string? url = Environment.GetEnvironmentVariable("DATABASE_URL");
        if (string.IsNullOrWhiteSpace(url))
        {
            return new Database(null);
        }
        return new Database(NpgsqlDataSource.Create(ConnectionString(url, poolSize)));
    }

    /// <summary>Npgsql takes key=value connection strings, not URLs: translates one to the other.</summary>
    internal static NpgsqlConnectionStringBuilder ConnectionString(string url, int poolSize)
    {
        if (!Uri.TryCreate(url, UriKind.Absolute, out Uri? uri) || uri.Scheme is not ("postgres" or "postgresql")
            || uri.Host.Length == 0)
        {
            throw new ArgumentException(
                "DATABASE_URL is not a PostgreSQL URL (postgres://user:password@host:port/database)");
        }
        string[] userInfo = uri.UserInfo.Split(':', 2);
        return new NpgsqlConnectionStringBuilder
        {
            Host = uri.Host,
            Port = uri.IsDefaultPort || uri.Port < 0 ? 5432 : uri.Port,
            Database = Uri.UnescapeDataString(uri.AbsolutePath.TrimStart('/')),
            Username = Uri.UnescapeDataString(userInfo[0]),
            Password = userInfo.Length > 1 ? Uri.UnescapeDataString(userInfo[1]) : null,
            MaxPoolSize = poolSize,
            Timeout = ConnectTimeoutSeconds,
        };
    }

    /// <summary>/db and /queries: <paramref name="count"/> rows, each its own query by random id.</summary>
    public Task<World[]> ReadWorlds(int count) => WithConnection(connection => ReadWorlds(connection, count));

    /// <summary>/fortunes: every row of the fortune table.</summary>
    public Task<List<Fortune>> ReadFortunes() => WithConnection(async connection =>
    {
        var fortunes = new List<Fortune>();
        await using var command = new NpgsqlCommand(SelectFortunes, connection);
        await using NpgsqlDataReader reader = await command.ExecuteReaderAsync();
        while (await reader.ReadAsync())
        {
            fortunes.Add(new Fortune(reader.GetInt32(0), reader.GetString(1)));
        }
        return fortunes;
    });

    /// <summary>/updates: rows read, each given a new random number, written in one statement.</summary>
    public Task<World[]> UpdateWorlds(int count) => WithConnection(async connection =>
    {
        World[] worlds = await ReadWorlds(connection, count);
        int[] numbers = worlds.Select(_ => RandomId()).ToArray();
        (int[] ids, int[] values) = Worlds.PlanUpdates(worlds, numbers);
        await using var command = new NpgsqlCommand(UpdateWorlds, connection);
        command.Parameters.Add(new NpgsqlParameter<int[]> { TypedValue = ids });
        command.Parameters.Add(new NpgsqlParameter<int[]> { TypedValue = values });
        await command.ExecuteNonQueryAsync();
        return worlds;
    });

    private static async Task<World[]> ReadWorlds(NpgsqlConnection connection, int count)
    {
        var worlds = new World[count];
        await using var command = new NpgsqlCommand(SelectWorld, connection);
        var id = new NpgsqlParameter<int>();
        command.Parameters.Add(id);
        for (int i = 0; i < count; i++)
        {
            id.TypedValue = RandomId();
            await using NpgsqlDataReader reader = await command.ExecuteReaderAsync();
            await reader.ReadAsync();
            worlds[i] = new World(reader.GetInt32(0), reader.GetInt32(1));
        }
        return worlds;
    }

    private static int RandomId() => Random.Shared.Next(1, WorldRows + 1);

    /// <summary>Runs <paramref name="work"/> on a pooled connection; any database failure becomes DatabaseUnavailable.</summary>
    private async Task<T> WithConnection<T>(Func<NpgsqlConnection, Task<T>> work)
    {
        if (_source is null)
        {
            throw new DatabaseUnavailable("no database: DATABASE_URL is unset");
        }
        try
        {
            await using NpgsqlConnection connection = await _source.OpenConnectionAsync();
            return await work(connection);
        }
        catch (Exception e) when (e is NpgsqlException or TimeoutException or InvalidOperationException)
        {
            throw new DatabaseUnavailable($"database: {e.Message}", e);
        }
    }
}
